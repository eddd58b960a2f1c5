"""What both tokenizer kinds share: the engine's interface (chatglm.engine.types.TokenizerPrompts calls
get_command, get_prefix_tokens, build_single_message, decode and eos_token_id) and the load error."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from chatglm.model.checkpoint import CheckpointError

ROLES = ("system", "user", "assistant", "observation")


class TokenizerError(CheckpointError):
    """The weights folder's tokenizer cannot be read; the message names the file and the fix."""


class ChatTokenizer:
    """A vocabulary of ordinary tokens plus the special tokens in `commands`; subclasses encode and decode text."""

    eos_token_id: int
    commands: Dict[str, int]
    prefix: Sequence[str]  # ChatGLM3: [gMASK] sop; GLM-4: [gMASK] <sop>
    # The token forced when the logits are NaN/inf (ChatGLM3's InvalidScoreLogitsProcessor: 5); None = fail the row
    # (chatglm.engine.overflow).
    nan_fallback_id: Optional[int] = None

    def encode(self, text: str) -> List[int]:
        raise NotImplementedError

    def decode(self, ids: Sequence[int]) -> str:
        raise NotImplementedError

    def get_command(self, name: str) -> int:
        try:
            return self.commands[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a special token of this tokenizer") from None

    def get_prefix_tokens(self) -> List[int]:
        return [self.commands[name] for name in self.prefix]

    def build_single_message(self, role: str, metadata: str, content: str) -> List[int]:
        """<|role|> + encode(metadata + "\\n") + encode(content): special-token text inside a message is encoded
        as plain text, never as the special token (THUDM's builders do the same)."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        return [self.commands[f"<|{role}|>"]] + self.encode(f"{metadata}\n") + self.encode(content)

    def chat_prompt(self, messages: Sequence[dict], add_generation_prompt: bool = True) -> List[int]:
        """The prompt of a conversation ([{"role", "content", "metadata"?}]): prefix, each message, <|assistant|>."""
        ids = self.get_prefix_tokens()
        for message in messages:
            ids += self.build_single_message(message["role"], message.get("metadata", ""), message["content"])
        if add_generation_prompt:
            ids.append(self.commands["<|assistant|>"])
        return ids
