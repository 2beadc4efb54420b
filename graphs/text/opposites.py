"""Words whose opposites exclude them: what makes "inherited in a dominant pattern" deny "… recessive …".

Why a list: a claim is most often wrong about a disease by one word said the other way round ("dominant"
for recessive, "increases" for decreases, "weight gain" for weight loss, "usually spreads" for rarely
spreads). Two lists, because not every contrast excludes:

- :data:`EXCLUSIVE` pairs cannot both hold of one statement, so a sentence that says the claim with one word
  turned into its exclusive opposite denies it (agent/nodes/claim_restatement.py);
- :data:`CONTRASTS` adds pairs that often hold together ("affects men and women", "children and adults",
  "mild to severe"): a sentence naming the other side of such a pair alongside the claim's words is read as
  undecided, never as restating it ("more common in men than in women" does not say "more common in women").

``evals/claim_data.py``'s synthetic mutations (``SWAPS``) are a separate, pinned list: the shipped checker
was trained on them, so they must not move when this one does.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphs.text.word_stems import stem

EXCLUSIVE_PAIRS: tuple[tuple[str, str], ...] = (
    ("dominant", "recessive"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("raises", "lowers"),
    ("raised", "lowered"),
    ("higher", "lower"),
    ("high", "low"),
    ("highest", "lowest"),
    ("more", "less"),
    ("more", "fewer"),
    ("most", "least"),
    ("common", "rare"),
    ("common", "uncommon"),
    ("commonly", "rarely"),
    ("usually", "rarely"),
    ("often", "rarely"),
    ("frequently", "rarely"),
    ("bacterial", "viral"),
    ("bacteria", "viruses"),
    ("bacterium", "virus"),
    ("benign", "malignant"),
    ("noncancerous", "cancerous"),
    ("overactive", "underactive"),
    ("hyperactive", "underactive"),
    ("excess", "deficiency"),
    ("gain", "loss"),
    ("gains", "loses"),
    ("causes", "prevents"),
    ("cause", "prevent"),
    ("caused", "prevented"),
    ("before", "after"),
    ("contagious", "noncontagious"),
    ("effective", "ineffective"),
)
"""Pairs that exclude each other within one statement about one thing."""
CONTRAST_PAIRS: tuple[tuple[str, str], ...] = (
    ("men", "women"),
    ("male", "female"),
    ("males", "females"),
    ("boys", "girls"),
    ("children", "adults"),
    ("child", "adult"),
    ("acute", "chronic"),
    ("mild", "severe"),
    ("early", "late"),
    ("left", "right"),
    ("upper", "lower"),
)
"""Pairs a sentence often says together, so neither side alone is denied by the other."""


OPPOSITE_CHARS = 6
"""Letters the opposites are matched on: six, so "increases" meets "increase" and "decreased" meets
"decrease", while "community" does not meet "common"."""


def _key(word: str) -> str:
    return stem(word, OPPOSITE_CHARS)


def _index(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in pairs:
        out.setdefault(_key(a), set()).add(_key(b))
        out.setdefault(_key(b), set()).add(_key(a))
    return {word: frozenset(others) for word, others in out.items()}


EXCLUSIVE = _index(EXCLUSIVE_PAIRS)
CONTRASTS = _index(EXCLUSIVE_PAIRS + CONTRAST_PAIRS)


def opposite_key(word: str) -> str:
    """The form of ``word`` the opposites are keyed on (its six-letter stem)."""
    return _key(word)


def exclusive_opposites(word: str) -> frozenset[str]:
    """The keys (:func:`opposite_key`) of the words that exclude ``word`` in one statement; empty when
    none."""
    return EXCLUSIVE.get(_key(word), frozenset())


def contrasts(word: str) -> frozenset[str]:
    """The keys of every word that stands opposite ``word``, exclusive or not."""
    return CONTRASTS.get(_key(word), frozenset())
