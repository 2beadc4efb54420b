"""Five-letter stems of a text's words: the loose word match the claim checks use.

Why one helper: the reply check compares a claim's words with a passage's, a KG target's name and a
sentence's in three places (agent/nodes/reply_sentences.py, claim_kg.py, claim_restatement.py); without a
tagger or lemmatiser, the first five letters of a word's singular match its inflections ("ticks" ~ "tick",
"mosquitoes" ~ "mosquito", "prevention" ~ "prevent", "antibiotics" ~ "antibiotic") at the price of rare
collisions, which is why every user of it also holds the claim to its condition or its KG edge.
"""

from __future__ import annotations

import re

STEM_CHARS = 5
_WORD = re.compile(r"[a-z0-9]+")


def singular(word: str) -> str:
    """``word`` without a plural -s (not -ss; words of five letters or more)."""
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 4 else word


def stem(word: str, chars: int = STEM_CHARS) -> str:
    return singular(word.lower())[:chars]


def word_stems(
    text: str, min_chars: int = 1, skip: frozenset[str] = frozenset(), chars: int = STEM_CHARS
) -> set[str]:
    """The stems (first ``chars`` letters of the singular) of the words of ``text`` of at least
    ``min_chars`` letters, other than the ``skip`` words (lower case); "viral" counts as "virus"."""
    words = _WORD.findall(text.lower().replace("viral", "virus"))
    return {stem(w, chars) for w in words if len(w) >= min_chars and w not in skip}
