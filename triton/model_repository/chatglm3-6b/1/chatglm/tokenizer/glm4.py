"""GLM-4's tokenizer (GLM-4-9B-chat, CodeGeeX4-all-9b): byte-level BPE whose `tokenizer.model` is a rank file
(one `base64(token) rank` a line), read with tiktoken and GLM-4's pre-tokenizer pattern; the special tokens follow
the ranks (151329… in the real model), as tokenizer_config.json declares them."""
from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Dict, List, Optional, Sequence

from chatglm.tokenizer.common import ChatTokenizer, TokenizerError

# GLM-4's pre-tokenizer split (the pattern its tokenizer gives tiktoken): contractions, letters with one leading
# non-letter, numbers of up to 3 digits, punctuation runs, newlines, spaces.
PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# In the order GLM-4 numbers them after the ranks.
SPECIAL_TOKENS = ("<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
                  "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>",
                  "<|begin_of_video|>", "<|end_of_video|>")


def read_ranks(path: str) -> Dict[bytes, int]:
    ranks: Dict[bytes, int] = {}
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                token, rank = line.split()
                ranks[base64.b64decode(token, validate=True)] = int(rank)
            except (ValueError, binascii.Error):
                raise TokenizerError(f"{path} line {number} is not 'base64(token) rank': not GLM-4's tokenizer.model "
                                     f"(download it again)") from None
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise TokenizerError(f"{path}: the ranks are not 0..{len(ranks) - 1} (download it again)")
    return ranks


def added_tokens(folder: str) -> Dict[str, int]:
    """Every token tokenizer_config.json's added_tokens_decoder declares (content -> id); none without the file."""
    path = os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            declared = json.load(f).get("added_tokens_decoder") or {}
        return {str(entry["content"]): int(key) for key, entry in declared.items()}
    except (OSError, ValueError, AttributeError, TypeError, KeyError) as exc:
        raise TokenizerError(f"cannot read {path}: {exc}") from None


def special_ids(folder: str, first: int) -> Dict[str, int]:
    """The special tokens' ids: tokenizer_config.json's added_tokens_decoder where it declares them, else in
    SPECIAL_TOKENS order after the ranks (what GLM-4's files give them)."""
    ids = {name: first + i for i, name in enumerate(SPECIAL_TOKENS)}
    for name, i in added_tokens(folder).items():
        if name in ids:
            ids[name] = i
    return ids


class GLM4Tokenizer(ChatTokenizer):
    prefix = ("[gMASK]", "<sop>")

    def __init__(self, folder: str):
        import tiktoken

        path = os.path.join(folder, "tokenizer.model")
        ranks = read_ranks(path)
        self.commands = special_ids(folder, len(ranks))
        # Added tokens beyond GLM-4's own (none in GLM-4-9B-chat's files): kept so that a prompt layout can ask
        # whether the weights' tokenizer makes a marker one token (added_token_id).
        self._added = {name: i for name, i in added_tokens(folder).items() if name not in self.commands}
        taken = set(ranks.values()) & (set(self.commands.values()) | set(self._added.values()))
        if taken:
            raise TokenizerError(f"{path}: special token ids {sorted(taken)} are also ranks")
        self.encoding = tiktoken.Encoding(name="glm4", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={})
        self.eos_token_id = self.commands["<|endoftext|>"]
        self._special_text = {i: name for name, i in {**self._added, **self.commands}.items()}
        self._rank_count = len(ranks)

    def added_token_id(self, name: str) -> Optional[int]:
        """The id tokenizer_config.json gives `name` as an added token (a special token or not), else None."""
        return self.commands.get(name, self._added.get(name))

    def encode(self, text: str) -> List[int]:
        return self.encoding.encode_ordinary(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Special ids as their text; ids past the vocabulary (padding rows of the output layer) as nothing."""
        parts: List[bytes] = []
        for i in ids:
            i = int(i)
            if i in self._special_text:
                parts.append(self._special_text[i].encode())
            elif 0 <= i < self._rank_count:
                parts.append(self.encoding.decode_single_token_bytes(i))
        return b"".join(parts).decode("utf-8", errors="replace")
