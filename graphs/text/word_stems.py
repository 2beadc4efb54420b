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
    return {s for w in _words(text, min_chars) if (s := stem(w, chars)) not in skipped}


def _as_read(text: str) -> str:
    """``text`` in lower case, "viral" read as "virus" (one word for the claim checks; "antiviral" too)."""
    return text.lower().replace("viral", "virus")


def _words(text: str, min_chars: int) -> list[str]:
    """The lower-case words of ``text`` of at least ``min_chars`` letters, "viral" read as "virus"."""
    return [w for w in _WORD.findall(_as_read(text)) if len(w) >= min_chars]


CLAIM_STEM_CHARS = 6
SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "edly", "ed", "ly", "es", "s")
"""Endings taken off before a claim word is cut to :data:`CLAIM_STEM_CHARS` letters, longest first, one
at most, leaving three letters or more: "treated", "treatment" and "treats" all read "treat"; "cured",
"curing" and "cure" read "cur" (a final "e" goes too)."""
KEEPS_FINAL_S = ("ss", "us", "is")
"""Words whose final "s" is not a plural or a verb ending ("illness", "virus", "diagnosis")."""


def claim_stem(word: str) -> str:
    """The stem the restatement rule matches a claim's words on (agent/nodes/claim_restatement.py).

    Why not the first four letters of the word, as before: every "anti-" word shared one stem, so "the flu
    is treated with antibiotics" was *supported* by "Antiviral Treatments for 2009 H1N1" and "gout is
    treated with antibiotics" by "… non-steroidal anti-inflammatory drugs" — a colleague's classic error
    endorsed. Inflections are taken off instead (:data:`SUFFIXES`), and six letters kept, so "antibiotic",
    "antiviral" and "antibody" stay three words while "cured" still meets "cure"."""
    low = _as_read(word)  # as :func:`claim_stems` reads it: a claim's own "viral" had met nothing
    lower = min(singular_forms(low) or {low}, key=len)
    for suffix in SUFFIXES:
        if (suffix == "s" and lower.endswith(KEEPS_FINAL_S)) or (suffix == "ed" and lower.endswith("eed")):
            continue  # "virus", "illness"; "bleed", "need"
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 3:
            lower = lower[: -len(suffix)]
            break
    if lower.endswith("e") and len(lower) > 3:
        lower = lower[:-1]
    return lower[:CLAIM_STEM_CHARS]


def claim_stems(text: str, min_chars: int = 1) -> set[str]:
    """:func:`claim_stem` of each word of ``text`` of at least ``min_chars`` letters ("viral" as "virus")."""
    return {claim_stem(w) for w in _words(text, min_chars)}
