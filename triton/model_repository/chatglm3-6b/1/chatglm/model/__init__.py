"""ChatGLM3 itself: its checkpoint, its forward pass and the KV cache that pass reads and writes."""
