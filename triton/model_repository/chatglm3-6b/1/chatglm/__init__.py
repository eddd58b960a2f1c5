"""ChatGLM3 on Triton's Python backend: serving/ (Triton's side), engine/ (what generates tokens), model/ (ChatGLM3's
weights, forward pass and KV cache). model.py beside this package is Triton's entry point."""
