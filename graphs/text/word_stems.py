"""Five-letter stems of a text's words: the loose word match the claim checks use.

Why one helper: the reply check compares a claim's words with a passage's, a KG target's name and a
sentence's in three places (agent/nodes/reply_sentences.py, claim_kg.py, claim_restatement.py); without a
tagger or lemmatiser, the first five letters of a word's singular match its inflections ("ticks" ~ "tick",
"mosquitoes" ~ "mosquito", "prevention" ~ "prevent", "antibiotics" ~ "antibiotic") at the price of rare
collisions, which is why every user of it also holds the claim to its condition or its KG edge.
"""

from __future__ import annotations

import re

from graphs.text.term_variants import singular_forms

STEM_CHARS = 5
_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str, chars: int = STEM_CHARS) -> str:
    """The first ``chars`` letters of the word's singular (``term_variants.singular_forms``, the linker's
    own plural rules: "diabetes" stays, "viruses" → "virus")."""
    lower = word.lower()
    return min(singular_forms(lower) or {lower}, key=len)[:chars]


def word_stems(
    text: str, min_chars: int = 1, skip: frozenset[str] = frozenset(), chars: int = STEM_CHARS
) -> set[str]:
    """The stems of the words of ``text`` of at least ``min_chars`` letters, other than those of the
    ``skip`` words (matched by stem, so "membranes" is skipped by "membrane"); "viral" counts as "virus"."""
    skipped = {stem(w, chars) for w in skip}
    words = _WORD.findall(text.lower().replace("viral", "virus"))
    return {s for w in words if len(w) >= min_chars and (s := stem(w, chars)) not in skipped}
