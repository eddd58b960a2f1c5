"""Engines: the seam (types), the one the config names (factory), the native and Hugging Face engines and the
sampling they share (generation)."""
