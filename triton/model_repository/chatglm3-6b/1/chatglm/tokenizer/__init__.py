"""Tokenizers of the ChatGLM family, read from the weights folder's data files by our own code: no Python file
from the weights folder is ever imported or run (chatglm.tokenizer.load picks the kind)."""
