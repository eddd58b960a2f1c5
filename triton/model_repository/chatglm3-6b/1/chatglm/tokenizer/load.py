"""Picks the tokenizer of a weights folder from its `tokenizer.model`: a rank file (text lines `base64 rank`) is
GLM-4's, anything else is read as ChatGLM3's SentencePiece model. Python files in the folder (THUDM's
tokenization_chatglm.py) are never imported: no code from a weights folder runs."""
from __future__ import annotations

import os

from chatglm.tokenizer.common import ChatTokenizer, TokenizerError


def tokenizer_kind(path: str) -> str:
    """"tiktoken" (GLM-4) or "sentencepiece" (ChatGLM3), from the file's first line."""
    with open(path, "rb") as f:
        first = f.readline(512).split()
    if len(first) == 2 and first[1].isdigit() and all(c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" for c in first[0]):
        return "tiktoken"
    return "sentencepiece"


def load_tokenizer(folder: str) -> ChatTokenizer:
    path = os.path.join(folder, "tokenizer.model")
    if not os.path.isfile(path):
        raise TokenizerError(f"no tokenizer.model in {folder!r}: the weights folder must hold the model's tokenizer "
                             f"file; download tokenizer.model from the model's Hub repository into it (the "
                             f"Download command fetches every expected file)")
    if tokenizer_kind(path) == "tiktoken":
        from chatglm.tokenizer.glm4 import GLM4Tokenizer

        return GLM4Tokenizer(folder)
    from chatglm.tokenizer.chatglm3 import ChatGLM3Tokenizer

    return ChatGLM3Tokenizer(folder)
