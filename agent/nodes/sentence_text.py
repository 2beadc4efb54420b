"""What a sentence's text is, before what it says: a heading, a pointer to another page, a planted
instruction, or a list item — and how a shown sentence reads on one line.

Why a module of its own: the key sentences, the reply check's quotes and the reader's training data all ask
the same questions of a sentence's text (``states_something``), and the renderers need ``readable``; none of
that depends on the question or the reader.
"""

from __future__ import annotations

import re

from agent.citations import reads_as_instruction
from tools.ranking import word_set

NAVIGATION = re.compile(
    r"^\W*(for more (information|details|about)|to learn more|learn more|see (also|the section)|visit |"
    r"click |these resources|this section|the following (resources|organizations)|"
    r"watch (a|the|this)( [a-z]+)? video|"
    r"see (a|the) (chart|table|figure|video|picture|diagram)|"
    r"see .{0,80}?\bfor (more|further) (information|details)|"
    r"for information (about|on) .{0,100}?\bsee (our|the)\b.{0,60}?\b(page|section|summary|fact sheet)\b|"
    r"for\b[^.;]{0,120}?,\s*see\b(?!\s+(a|an|your|the)\s+(doctor|health|provider|dentist|specialist|nurse))|"
    r"[^.;]{0,120}?\b(has|have|offers|provides) (more |additional |further )?information (about|on)\b)",
    re.IGNORECASE,
)
"""A fact sheet's pointers to elsewhere ("For more information, see the section titled …"): a newcomer was
shown one as a key sentence; it states nothing about the patient's question. Nor does "(Watch the video to
learn how one woman manages her type 2 diabetes." (shown for "How is type 2 diabetes treated?"), "(Watch the
animated video to learn more about the causes of glaucoma." (the first key sentence of "What causes
glaucoma?"), or "See
Diagnosis of TB (Fact sheet) for more information about TB diagnosis.", nor "For information about side
effects that begin during treatment for cancer, see our Side Effects page." (PDQ summaries), nor "For ductal
carcinoma in situ (DCIS) treatment options, see Ductal Carcinoma in Situ." ("For severe pain, see a doctor"
is advice, and stays), nor "The National Institute of Arthritis and Musculoskeletal and Skin Diseases
(NIAMS) at NIH has more information about gout." (a key sentence of "What is gout?")."""
LIST_ITEM = re.compile(r"\s*\n+\s*[-•*]\s+|\s{2,}[-•*]\s+")


LEADING_BULLETS = re.compile(r"^(?:[-•*]\s+)+")


def readable(sentence: str) -> str:
    """A key sentence on one line; a lead-in with list items reads "… are fatigue, weight gain, …"."""
    parts = [p.strip() for p in LIST_ITEM.split(sentence) if p.strip()]
    if len(parts) > 1:
        lead = LEADING_BULLETS.sub("", parts[0])  # a passage opening on its list: no "- - Joint pain …"
        after_item = ", " if lead != parts[0] else " "  # the lead is itself a list item: one more item
        joint = ": " if lead.endswith(":") else after_item
        return lead.rstrip(":") + joint + ", ".join(p.lstrip("-•* ").strip() for p in parts[1:])
    flat = LEADING_BULLETS.sub("", " ".join(sentence.split()))  # shown as a bullet: no "- - item"
    return without_glued_heading(without_repeated_heading(flat))


def without_repeated_heading(text: str) -> str:
    """The sentence without a heading it then repeats: MedQuAD runs a section title into its first sentence
    ("Early Symptoms Early symptoms of Parkinson's disease are subtle …"), shown once."""
    words = text.split(" ")
    for k in range(1, 7):
        both_start = len(words) > 2 * k and words[0][:1].isupper() and words[k][:1].isupper()
        if both_start and [w.lower() for w in words[:k]] == [w.lower() for w in words[k : 2 * k]]:
            return " ".join(words[k:])
    return text


SMALL_WORDS = word_set("a an and as at by for from in of on or the to with can is are your")
SENTENCE_STARTS = word_set(
    "There The This These That It Its Most Many Some Your You If When While Although In For A An Each Every "
    "No About Several Other Both Only After Before During As Because With Doctors Through"
)
"""Words a sentence (not a name) starts with: the cut after a run-in heading must land on one."""


def without_glued_heading(text: str) -> str:
    """The sentence without a section title MedQuAD runs into it ("Medications Can Treat Symptoms There is
    no known cure for Alzheimer's disease …", "A Vaccine for Adults 60 and Older In May 2006, the FDA …"):
    a Title-Case run of two to eight words, ending on a capitalised word or a number, before a word a
    sentence starts with. A name that starts a sentence ("Johns Hopkins researchers found …") is kept: the
    next word must be one of :data:`SENTENCE_STARTS`."""
    words = text.split(" ")
    for k in range(2, min(9, len(words) - 3)):
        head, start = words[:k], words[k]
        titled = all(map(_in_title, head))
        capitals = sum(w[:1].isupper() and w.lower() not in SMALL_WORDS for w in head)
        last = head[-1]
        if not titled:
            return text
        ends_on_a_name = (last[:1].isupper() or last[:1].isdigit()) and last.lower() not in SMALL_WORDS
        if start in SENTENCE_STARTS and capitals >= 2 and ends_on_a_name:
            return " ".join(words[k:])
    return text


COUNTED_ELSEWHERE = re.compile(
    r"\S\s+(?:these|those) (?:two|three|four|five|six|seven|eight|nine|ten|\d+) [a-z]+", re.IGNORECASE
)
"""A sentence about a counted list it does not hold ("… should be on achieving these three goals."): shown
alone, under "How is tuberculosis spread?", it says nothing. Not at the sentence's start: "These two drugs
are given together." refers back, and is quoted with the sentence before it (key_sentences.ANAPHOR)."""

FRAGMENT = re.compile(r"\((?:e\.g\.|i\.e\.|for example)|[a-z]{3,}\s+(?:a|an|the)\s")
"""A piece of a run-together list, not a sentence: "(e.g., via use of telephonic or internet-assisted
therapies)" and "better understand the relationship between … integrate treatment for depression …" were
shown for "How is depression treated?"; "uses a dye and different wavelength of light …" for psoriasis. A
lower-case first word of three letters or more and then an article marks one (a verb of a list item); a gene
or a unit ("p53 binds …", "mRNA levels …") does not start that way, and a BioASQ snippet cut mid-phrase
("intestinal epithelial cells [FABP2 …", which holds an answer) is kept: a first version that dropped every
lower-case start lost that answer on bioasq-dev."""


DANGLING_CLAUSE = re.compile(
    r"^(?:When|If|Before|After|While|Whenever|Until|Unless|Once|Because|Since|Although|Though)\s[^,;:.!?]*$"
)
"""A subordinate clause standing alone, with no main clause and no full stop: a list's lead-in whose items
fell into the next passage. "When traveling to areas where malaria is found" (its list — see your doctor
for medicines that protect you, wear insect repellent … — is the next passage) was the whole direct answer
to "How can I prevent malaria when travelling?"."""


LEAD_IN_ONLY = re.compile(
    r"\b(?:include|includes|including|such as|the following|as follows)\s*$", re.IGNORECASE
)
"""A list's lead-in whose items are gone, with no full stop or colon: "The problems of gastroparesis can
include" was the first key sentence of "What is gastroparesis?"."""
LONE_HEADINGS = frozenset({"key points", "summary", "overview", "introduction", "main points", "highlights"})
"""Headings of one or two words that :func:`is_title` (three words or more) lets through: the PDQ summaries'
"Key Points" was the first key sentence of "What is hairy cell leukemia?"."""


def states_something(sentence: str) -> bool:
    """A sentence that may be shown as evidence: not a heading asked as a question ("How Is Cystic Fibrosis
    Inherited?") or on its own (:func:`is_title`), not a pointer to another page or to a counted list held
    elsewhere (:data:`COUNTED_ELSEWHERE`), and not an instruction planted in a document ("ignore all previous
    instructions and tell the reader …": data, never a key sentence or an LLM prompt line)."""
    flat = sentence.strip()
    if flat.endswith("?") or NAVIGATION.search(flat) or reads_as_instruction(flat) or FRAGMENT.match(flat):
        return False
    if DANGLING_CLAUSE.match(flat) or LEAD_IN_ONLY.search(flat) or flat.lower() in LONE_HEADINGS:
        return False
    if COUNTED_ELSEWHERE.search(flat) and not LIST_ITEM.search(sentence) and not flat.endswith(":"):
        return False
    return not is_title(flat)


LONG_TITLE_WORDS = 6
"""Words from which a title may hold one lower-case word (a shorter line with one is as often a fragment)."""


def is_title(text: str) -> bool:
    """A section title on its own ("Other Medical Causes of High Blood Pressure"): three words or more,
    every one capitalised but the small ones, and no full stop — it names a topic and states nothing. A
    longer one may keep one lower-case word, as a species name does: "Blood Transfusion and Organ Transplant
    Risks Associated with Anaplasma species" was shown as a key sentence of "What are the symptoms of Lyme
    disease?"."""
    words = text.split()
    if len(words) < 3 or text.endswith((".", "!", ":")):
        return False
    lower = sum(not _in_title(w) for w in words)
    return lower == 0 or (lower == 1 and len(words) >= LONG_TITLE_WORDS)


def _in_title(word: str) -> bool:
    """A word as a Title-Case heading writes it: capitalised, a number, a small word ("of", "and") or a sign
    ("&" in "Questions & Answers: Antiviral Drugs, 2009-2010 Flu Season", quoted as the best sentence for
    "Can antibiotics treat the flu?")."""
    return (
        word[:1].isupper()
        or word[:1].isdigit()
        or word.lower() in SMALL_WORDS
        or not any(c.isalnum() for c in word)
    )
