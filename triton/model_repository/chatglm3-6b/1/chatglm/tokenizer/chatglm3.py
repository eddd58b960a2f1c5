"""ChatGLM3's tokenizer: a SentencePiece model (`tokenizer.model`) read with sentencepiece; its nine special tokens
follow the pieces ([MASK] at the piece count, 64789 in ChatGLM3-6B) in the order ChatGLM3 numbers them."""
from __future__ import annotations

import os
from typing import List, Sequence

from chatglm.tokenizer.common import ChatTokenizer, TokenizerError

SPECIAL_TOKENS = ("[MASK]", "[gMASK]", "[sMASK]", "sop", "eop", "<|system|>", "<|user|>", "<|assistant|>",
                  "<|observation|>")


class ChatGLM3Tokenizer(ChatTokenizer):
    prefix = ("[gMASK]", "sop")
    nan_fallback_id = 5  # what ChatGLM3's own chat() does (chatglm.engine.generation.CHATGLM_NAN_FALLBACK_ID)

    def __init__(self, folder: str):
        from sentencepiece import SentencePieceProcessor

        path = os.path.join(folder, "tokenizer.model")
        try:
            self.model = SentencePieceProcessor(model_file=path)
        except (OSError, RuntimeError) as exc:
            raise TokenizerError(f"cannot read {path} as a SentencePiece model ({str(exc)[:200]}): download it "
                                 f"again") from None
        pieces = self.model.get_piece_size()
        self.commands = {name: pieces + i for i, name in enumerate(SPECIAL_TOKENS)}
        self.eos_token_id = self.model.eos_id()
        self._special_text = {i: name for name, i in self.commands.items()}

    def encode(self, text: str) -> List[int]:
        return self.model.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Runs of ordinary ids through SentencePiece, special ids as their text (as ChatGLM3 decodes)."""
        text, run = "", []
        for i in ids:
            i = int(i)
            if i in self._special_text:
                if run:
                    text += self.model.decode(run)
                    run = []
                text += self._special_text[i]
            elif 0 <= i < self.model.get_piece_size():
                run.append(i)
        return text + (self.model.decode(run) if run else "")
