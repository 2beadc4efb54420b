"""What an abbreviation stands for, as a text writes it: "tumor-associated macrophages (TAMs)", "Runx2
(runt-related transcription factor 2)".

Why: "What does RUNX2 stand for?" was *answered* with sentences that name RUNX2 and never expand it, while a
retrieved snippet reads "Runt related factor-2 (Runx2)". The reader scores sentences for being about the
question, not for defining its term; a definition is a pattern, and the pattern is well known.

How: the Schwartz & Hearst (2003) test — every letter and digit of the short form appears, in order, in the
long form, its first one at the start of a word — on the words before a bracketed short form ("long (SF)")
or inside the bracket after it ("SF (long)"), at most ``min(|SF| + 5, 2·|SF|)`` words (their bound).
Gene symbols are not acronyms ("Runx2" for "runt-related transcription factor 2" has no "x" to match), so a
symbol with a digit also matches a long form that starts with its first three letters and ends with its
number.

Not a library: the ``abbreviations`` package (Schwartz–Hearst, MIT) finds all pairs in a text but
configures the root logger on import and has no gene-symbol rule; the test itself is the twenty lines of
:func:`schwartz_hearst_start`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

ASKS_EXPANSION = re.compile(
    r"\bwhat\s+(?:does|do)\s+(?:the\s+)?(?:(?:abbreviation|acronym|gene\s+symbol|symbol|term|initials)\s+)?"
    r"[\"'“‘]?(?P<a>[A-Za-z][\w-]*?)[\"'”’]?\s+(?:stand|stands)\s+for\b"
    r"|\bwhat\s+is\s+(?P<b>[A-Za-z][\w-]*?)\s+short\s+for\b"
    r"|\bwhat\s+is\s+the\s+(?:full\s+(?:name|form)|long\s+form|expansion|meaning)\s+of\s+(?:the\s+)?"
    r"(?:(?:abbreviation|acronym)\s+)?[\"'“‘]?(?P<c>[A-Za-z][\w-]*?)[\"'”’]?\s*\??\s*$",
    re.IGNORECASE,
)
"""Questions asking what an abbreviation stands for ("What does RUNX2 stand for?", "What is the full name of
the acronym MODY?", "What is COPD short for?")."""
SHORT_FORM = re.compile(r"[A-Za-z](?:[\w-]*\w)?")
STOP = re.compile(r"[.;:!?()\[\]{},]")
"""Where a long form cannot extend past: a sentence or clause end, another bracket, a comma."""
MIN_PREFIX = 3


def asked_expansion(question: str) -> str | None:
    """The short form whose expansion the question asks for, or ``None``."""
    m = ASKS_EXPANSION.search(question)
    if not m:
        return None
    token = next(g for g in m.groups() if g)
    return token if has_capital_or_digit(token) else None


def has_capital_or_digit(token: str) -> bool:
    """An abbreviation has a capital or a digit somewhere ("bDMARD", "RUNX2"); a plain word is not one."""
    return any(c.isupper() or c.isdigit() for c in token)


def schwartz_hearst_start(short: str, long: str) -> int | None:
    """Where in ``long`` the definition of ``short`` starts, or ``None``: matching right to left, each letter
    or digit of ``short`` must occur in ``long`` in order, the first one at the start of a word (Schwartz &
    Hearst 2003, ``findBestLongForm``)."""
    s, low, i = short.lower(), long.lower(), len(long) - 1
    first = first_alnum(s)
    for j in range(len(s) - 1, -1, -1):
        c = s[j]
        if not c.isalnum():
            continue
        while i >= 0 and (low[i] != c or (j == first and i > 0 and low[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
    start = i + 1
    return start if start == 0 or not long[start - 1].isalnum() else None


def first_alnum(text: str) -> int:
    return next((k for k, c in enumerate(text) if c.isalnum()), 0)


def symbol_start(short: str, words: list[str]) -> int | None:
    """For a gene-like symbol with a number ("Runx2", "PCAT6"): the index of the last word starting with its
    first three letters, when the last word ends with its number ("Runt related factor-2")."""
    number = re.search(r"\d+$", short)
    prefix = re.match(r"[A-Za-z]+", short)
    if not number or not prefix or len(prefix.group()) < MIN_PREFIX or not words:
        return None
    if not re.search(r"(?<!\d)" + number.group() + r"$", words[-1]):
        return None
    stem = prefix.group()[:MIN_PREFIX].lower()
    starts = [k for k, w in enumerate(words) if w.lower().startswith(stem)]
    return starts[-1] if starts and len(words) - starts[-1] >= 2 else None


def long_form(short: str, candidate: str) -> str | None:
    """The definition of ``short`` at the end of ``candidate`` (the words before or inside a bracket), or
    ``None`` when it does not pass the test."""
    letters = sum(1 for c in short if c.isalnum())
    words = candidate.split()[-min(letters + 5, 2 * letters) :]
    if not words or any(w.lower() == short.lower() for w in words):
        return None
    text = " ".join(words)
    start = schwartz_hearst_start(short, text)
    if start is not None:
        found = text[start:].strip()
        spelled_out = " " in found or len(found) > len(short) + 2  # "epiregulin" for "EREG", not "Ereg"
        return found if len(found) > len(short) and spelled_out else None
    k = symbol_start(short, words)
    return " ".join(words[k:]) if k is not None else None


def definitions(short: str, text: str) -> list[str]:
    """Every long form ``text`` gives for ``short`` ("long (SF)" or "SF (long)"), in order of appearance;
    case-insensitive on the short form, a plural "s" allowed ("TAMs" for "TAM")."""
    sf = re.escape(short.rstrip("s") if short.endswith("s") and short[-2:-1].isupper() else short)
    out: list[str] = []
    for m in re.finditer(r"\(\s*" + sf + r"s?\s*\)", text, re.IGNORECASE):
        before = STOP.split(text[: m.start()])[-1]
        found = long_form(short, before)
        if found:
            out.append(found)
    for m in re.finditer(r"(?<![\w-])" + sf + r"s?\s*\(([^()]{3,120})\)", text, re.IGNORECASE):
        inside = STOP.split(m.group(1))[0]
        found = long_form(short, inside) if inside.strip() else None
        if found and found.split()[0].lower() == inside.split()[0].lower():
            out.append(found)
    return out


def most_given(short: str, texts: Iterable[str]) -> tuple[str, list[int]] | None:
    """The long form ``texts`` give most often for ``short`` (case-insensitive; the first written form of it)
    and the indices of the texts that give it; ``None`` when none does."""
    counts: Counter[str] = Counter()
    where: dict[str, list[int]] = {}
    written: dict[str, str] = {}
    for index, text in enumerate(texts):
        for found in definitions(short, text):
            key = normalised(found)
            counts[key] += 1
            written.setdefault(key, found)
            if index not in where.setdefault(key, []):
                where[key].append(index)
    if not counts:
        return None
    best = max(counts, key=lambda k: (counts[k], -where[k][0]))
    return written[best], where[best]


def normalised(long: str) -> str:
    return " ".join(re.sub(r"[-‐‑]", " ", long.lower()).split())
