"""Common paraphrases written one way: what lets a colleague's wording meet a page's.

Why: the reply check decides a claim by a passage sentence that restates it word for word
(agent/nodes/claim_restatement.py), so "hives usually clear up on their own" met nothing in "They usually go
away on their own", "giant cell arteritis almost always affects people over fifty" nothing in "… over the age
of 50", and "impetigo is mostly due to staph" nothing in "It is usually caused by staphylococcal (staph)
bacteria". Each phrase below is rewritten, in claim and sentence alike, to one form before the words are
compared. The list was written from 36 hand-written colleague paraphrases kept for calibration
(evals/data/reply_claims_calibration.jsonl) and is measured on the held-out 30 (evals/reports/
claim_check_benchmark.md). Only equivalences that hold in any clinical sentence belong here; a near-synonym
that changes strength ("often" for "usually", "needed" for "recommended") does not.
"""

from __future__ import annotations

import re

NUMBER_WORDS = {
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
}
"""Numbers in words as digits ("over fifty" is "over 50"). Not "one": it is as often a pronoun ("no one",
"one of them") as a number."""

PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bdue to\b", re.I), "caused by"),
    (re.compile(r"\b(?:get|gets|got|getting) better\b", re.I), "recover"),
    (re.compile(r"\b(?:clear|clears|cleared|clearing) up\b", re.I), "resolve"),
    (re.compile(r"\b(?:go|goes|went|going|gone) away\b", re.I), "resolve"),
    (re.compile(r"\bleading (causes?)\b", re.I), r"most common \1"),
    (re.compile(r"\b(?:start|starts|started|starting)\b", re.I), "begin"),
    (re.compile(r"\b(?:began|begun|beginning|begins)\b", re.I), "begin"),
    (re.compile(r"\b(?:mostly|mainly|generally|typically)\b", re.I), "usually"),
)
"""(phrase, its one form)."""
NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.I)


def one_form(text: str) -> str:
    """``text`` with each phrase of :data:`PHRASES` in its one form and number words as digits (case of the
    rest kept)."""
    for pattern, form in PHRASES:
        text = pattern.sub(form, text)
    return NUMBER.sub(lambda m: NUMBER_WORDS[m.group(1).lower()], text)
