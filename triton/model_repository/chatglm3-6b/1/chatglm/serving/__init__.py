"""Triton's side: inputs and options, validation, the schedulers that drive an engine, responses and metrics."""
