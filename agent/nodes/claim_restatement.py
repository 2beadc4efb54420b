"""A claim a passage restates: decided by the passage's own words, affirmed or negated.

Why: the trained claim checker does not reach a verdict's precision (data/claims/CARD.md), yet the reply
"dengue spreads from person to person" was shown, as "closest, not a verdict", beside the passage sentence
"Dengue does not spread from person to person." A sentence that holds every content word of the claim says
the claim itself; whether a negation scopes over those words (the NegEx scopes of graphs/text/negation.py)
says which way (issue 22, item 3: "not", "no", "cannot" flip support).

The rule, for the claim's positive form (its yes/no question; a negated claim's verdict is flipped by the
caller as for the checker): a sentence of the claim's passages *restates* it when it holds the stem of every
content word of that form (at least ``MIN_CLAIM_WORDS``; graphs/text/word_stems.py). It *denies* the claim
when a negation trigger scopes over one of those words and *affirms* it when none does; a hedge the claim
lacks ("may", "might", "possibly") leaves it undecided. A sentence that holds every claim word but one and,
in its place, that word's exclusive opposite (graphs/text/opposites.py: "recessive" for "dominant") denies
it too; a claim entity the sentence names by another of its KG names counts as said. Supported when some
restating sentence affirms and none denies; contradicted when one denies and none affirms; otherwise no
verdict. Its precision on the
labelled claims is in evals/reports/claim_check_calibration.md and claim_check_benchmark.md ("restated").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agent.nodes.focus import sentences
from graphs.text.negation import negated_spans
from graphs.text.opposites import contrasts, exclusive_opposites, opposite_key
from graphs.text.paraphrases import one_form
from graphs.text.word_stems import claim_stem, claim_stems
from tools.ranking import STOP_WORDS, content_words, word_set

MIN_CLAIM_WORDS = 3
"""Content words a claim needs for a restatement to say anything: "Is X safe?" is held by too many
sentences that say something else of X."""
QUESTION_WORDS = word_set(
    "is are was were do does did can could should will would has have had may might must shall "
    "there it they this that these those true"
)
"""The yes/no question's own words ("true" from the rewriter's "Is it true that …", graphs/text/claims.py)."""
FILLER_WORDS = word_set("use used uses using make makes made come comes came basically really actually")
"""Words a colleague's claim carries that no sentence needs to repeat ("is the vaccine *used* to treat …",
"does his iron overload *come* from faulty HFE genes that *make* him absorb …")."""
HEDGES = word_set("may might could possibly probably perhaps potentially maybe suggest suggests some")
"""Words that weaken what a claim says outright ("X may cause Y" does not support "X causes Y")."""
UNCERTAIN = re.compile(
    r"\b(?:not (?:yet |well |fully |completely )?(?:known|clear|understood|certain|established)|unknown|"
    r"unclear|uncertain|controversial|remains? to be|whether)\b",
    re.I,
)
STUDY_AIM = re.compile(
    r"\b(?:aim(?:s|ed)?|objectives?|purpose|hypothes\w*|sought|investigat\w*|examin\w*|assess\w*|"
    r"evaluat\w*|determine[ds]?|explor\w*|compar\w*|this study|we studied|to test)\b",
    re.I,
)
"""A sentence that says what a study set out to find ("This study aimed to show the relationship between
serum paraoxonase 1 level and …") holds every word of the claim and finds nothing: three of six
"supported" restatements of PubMedQA calibration claims were such sentences."""
DIRECTION_WORDS = word_set("before after above below more less most least over under up down only all few")
"""Function words that carry what a claim says ("labor that starts *after* 37 weeks", "*more* common in
women"): kept as claim words, so a sentence that says "before" does not restate a claim that says "after"."""
MYTH = re.compile(r"\b(?:myths?|mistaken\w*|misconceptions?|wrongly|incorrectly|not true)\b", re.I)
"""A sentence that reports a belief to correct it: "Another common myth is that dirty skin causes acne" holds
every word of "acne is caused by dirty skin", unnegated."""
REVERSERS = word_set(
    "quit quits quitting stop stops stopping stopped cessation avoid avoids avoiding avoided without lack "
    "lacking absence absent withdrawal discontinuing discontinued discontinuation"
)
"""Words that turn what follows round ("*quitting* smoking lowers the risk" says nothing against "smoking
raises the risk"; "*stopping* warfarin raises it" nothing for "warfarin raises it"): a sentence with one the
claim lacks restates nothing."""
EITHER_WAY = re.compile(r"\bwith or without\b|\bwhether or not\b", re.I)
""""With or without treatment, most people … recover completely" turns nothing round: its "without" is not a
reverser (``REVERSERS``), and the Bell's palsy sentence restates "most people with Bell's palsy make a
complete recovery"."""
RELATION_WORDS = frozenset(
    claim_stem(word)
    for word in ("treat", "prevent", "cause", "cure", "diagnose", "screen", "transmit", "spread", "manage")
)
"""Words that name how the claim's terms are related. A sentence that names one of them the claim does not,
beside one it does, says more than one thing of those terms, and a bag of words cannot tell which: "No
medication, including metformin, is approved … to treat insulin resistance or prediabetes or to prevent type
2 diabetes" holds every word of "metformin is used to treat type 2 diabetes" under a negation, and
contradicted it."""
TYPE_MARK = re.compile(r"(?<=[a-z] )(?:[A-Z]|\d)\b")
"""A one-character type after a word ("hepatitis C", "type 2 diabetes", "hepatitis A"): a claim word too, or
"Hepatitis A and hepatitis B can be prevented with vaccines" restates "hepatitis C can be prevented with a
vaccine", and a type 2 sentence a type 1 claim."""
_WORD = re.compile(r"[A-Za-z0-9]+")
EntityFinder = Callable[[str], Iterable[tuple[str, frozenset[str]]]]
"""A text's KG entity mentions, as (surface, entity ids): ``DictionaryMatcher.find`` in a consult."""


@dataclass(frozen=True)
class Restatement:
    """The sentence that decides, its passage index, and which way it goes for the claim's positive form."""

    passage: int
    sentence: str
    affirms: bool
    opposite: tuple[str, str] | None = None
    """(the claim's word, the sentence's word) when the sentence says one claim word the other way round."""


def claim_words(question: str) -> set[str]:
    """The stems the claim's positive form asserts: its content words and direction words, without the
    question's own words."""
    kept = STOP_WORDS - DIRECTION_WORDS
    words = [w for w in content_words(question, kept) if w.lower() not in QUESTION_WORDS | FILLER_WORDS]
    return {s for w in words for s in claim_stems(w, 2)} | {t.lower() for t in TYPE_MARK.findall(question)}


def reading(
    sentence: str,
    wanted: set[str],
    claim_hedged: bool,
    from_title: frozenset[str] = frozenset(),
    claim_tokens: frozenset[str] = frozenset(),
    after_than: frozenset[str] = frozenset(),
) -> bool | None:
    """``True`` when ``sentence`` restates and affirms the claim, ``False`` when it denies it, ``None`` when
    it does not restate it, hedges what the claim says outright, or is ambiguous. ``from_title`` are claim
    words the passage's title already says (its condition: "Stress and spicy foods do not cause ulcers" on
    "What causes Peptic Ulcer?"); the sentence need not repeat them. ``claim_tokens`` are the claim's own
    words as written, for its opposites (graphs/text/opposites.py). ``after_than`` are the claim words
    a comparative claim says after its "than" (:func:`comparative_order`).

    Denied: some claim word is negated wherever the sentence says it, and no claim word is said both
    negated and not ("although dengue does not spread from person to person, mosquitoes spread it" is
    ambiguous about "dengue is spread by mosquitoes"); or the sentence says every claim word but one, and in
    its place that word's exclusive opposite, with nothing negated ("inherited in an autosomal recessive
    pattern" against "… dominant …"). Affirmed: every claim word, none negated, and no opposite of a claim
    word beside them ("more common in men than in women" does not affirm "more common in women")."""
    if sentence.rstrip().endswith("?"):
        return None  # a question ("Are wandering and agitation equivalent?") restates nothing
    if after_than:
        order = comparative_order(sentence, after_than)
        if order is None:
            return None
        if order == "reversed":  # "more common in women than in men" against "… in men than in women"
            way = reading(sentence, wanted, claim_hedged, from_title, claim_tokens)
            return False if way is True else None
    spans = [(m.start(), m.end()) for m in _WORD.finditer(sentence) if claim_stem(m.group()) in wanted]
    said = {claim_stem(sentence[s:e]) for s, e in spans}
    missing = wanted - said - from_title
    if not said or len(missing) > 1:
        return None
    if UNCERTAIN.search(sentence) or STUDY_AIM.search(sentence) or MYTH.search(sentence):
        return None  # "not known whether X causes Y", "we examined whether …", "a common myth is that …"
    words = {m.group().lower() for m in _WORD.finditer(sentence)}
    if REVERSERS & {m.group().lower() for m in _WORD.finditer(EITHER_WAY.sub(" ", sentence))} - claim_tokens:
        return None
    if another_relation(sentence, wanted, from_title):
        return None
    hedged = not claim_hedged and bool(HEDGES & words)
    if missing:
        return None if hedged else _said_opposite(sentence, spans, missing.pop(), claim_tokens)
    keys = {opposite_key(w) for w in words} - {opposite_key(t) for t in claim_tokens}
    if any(contrasts(t) & keys for t in claim_tokens):
        return None
    by_word: dict[str, set[bool]] = {}
    for (s, e), negated in zip(spans, negated_spans(sentence, spans, statement=True), strict=True):
        by_word.setdefault(claim_stem(sentence[s:e]), set()).add(negated)
    if any(len(ways) > 1 for ways in by_word.values()):
        return None
    if any(True in ways for ways in by_word.values()):
        return False
    return None if hedged else True


THAN = re.compile(r"\bthan\b", re.I)


COMPARED_WORDS = 3
"""Words after "than" that name what is compared ("than in men", "than you make bone"): a rewritten
question may carry the rest of the claim after them ("… faster than you make bone after about age 20?")."""


def _compared(text: str) -> tuple[set[str], set[str]] | None:
    """(stems before "than", stems of the ``COMPARED_WORDS`` words after it), or ``None`` without "than"."""
    parts = THAN.split(text, maxsplit=1)
    if len(parts) < 2:
        return None
    return claim_stems(parts[0]), claim_stems(" ".join(parts[1].split()[:COMPARED_WORDS]))


def after_than_words(question: str, wanted: set[str]) -> frozenset[str]:
    """The claim words a comparative claim compares against, said right after its "than" and not before it
    ("men" in "more common in women than in men"): empty when the claim compares nothing."""
    compared = _compared(question)
    return frozenset((compared[1] - compared[0]) & wanted) if compared else frozenset()


def comparative_order(sentence: str, after_than: frozenset[str]) -> str | None:
    """Whether ``sentence`` compares in the claim's order ("same"), the other way round ("reversed"), or
    says no comparison of the claim's terms (``None``).

    Why: the restatement compares bags of words, and "Both are more common in women than in men" holds
    every word of "giant cell arteritis is more common in men than in women" — it *supported* that claim.
    What follows "than" says which side is which."""
    compared = _compared(sentence)
    if compared is None:
        return None
    before, after = compared
    if after_than <= after:
        return "same"
    if after_than <= before and not after_than & after:
        return "reversed"
    return None


def another_relation(sentence: str, wanted: set[str], from_title: frozenset[str]) -> bool:
    """Whether ``sentence`` names a relation of the claim's terms beside the claim's own
    (:data:`RELATION_WORDS`) and does not set the two against each other.

    "No medication … to treat insulin resistance … or to prevent type 2 diabetes" negates both relations, so
    which of them is said of type 2 diabetes is for a parser, not a bag of words: no reading. "The shingles
    vaccine is a preventive therapy and not a treatment for … postherpetic neuralgia" affirms the other
    relation and negates the claim's: a contrast, which the reading may decide (it contradicts "the shingles
    vaccine is a treatment for postherpetic neuralgia")."""
    relations = [
        (m.span(), word)
        for m in _WORD.finditer(sentence)
        if (word := claim_stem(m.group())) in RELATION_WORDS
    ]
    own = [span for span, word in relations if word in wanted]
    other = [span for span, word in relations if word not in wanted | from_title]
    if not own or not other:
        return False
    negated = negated_spans(sentence, own + other, statement=True)
    own_negated, other_negated = negated[: len(own)], negated[len(own) :]
    return not (all(own_negated) and not any(other_negated))


def _said_opposite(
    sentence: str, spans: list[tuple[int, int]], missing: str, claim_tokens: frozenset[str]
) -> bool | None:
    """``False`` when ``sentence`` says, in the place of the claim's one missing word (stem ``missing``),
    an exclusive opposite of it and negates nothing it says of the claim; otherwise ``None``. A negation
    anywhere over those words (a double denial: "not rare" for "common") decides nothing."""
    hit = _opposite_in(sentence, {missing}, claim_tokens)
    if hit is None or any(negated_spans(sentence, spans + hit[2], statement=True)):
        return None
    return False


def _opposite_in(
    sentence: str, missing: set[str], claim_tokens: frozenset[str]
) -> tuple[str, str, list[tuple[int, int]]] | None:
    """(the claim's word, the sentence's opposite of it, where the sentence says that opposite) for the
    first claim word whose stem is in ``missing`` and whose exclusive opposite the sentence says."""
    claim_keys = {opposite_key(t) for t in claim_tokens}
    for token in sorted(t for t in claim_tokens if claim_stem(t) in missing):
        opposite = exclusive_opposites(token) - claim_keys
        found = [m for m in _WORD.finditer(sentence) if opposite_key(m.group()) in opposite]
        if found:
            return token, found[0].group().lower(), [(m.start(), m.end()) for m in found]
    return None


def _named_otherwise(
    sentence: str,
    wanted: set[str],
    claim_entities: list[tuple[frozenset[str], frozenset[str]]],
    entities_in: EntityFinder | None,
) -> frozenset[str]:
    """The claim words of entities ``sentence`` names by another KG name (the linker's synonyms)."""
    said = claim_stems(sentence, 2)
    lacking = [(stems, ids) for stems, ids in claim_entities if not stems <= said]
    if not lacking or entities_in is None or len(wanted - said - {w for s, _ in lacking for w in s}) > 1:
        return frozenset()  # nothing to look up, or too far from the claim for any synonym to matter
    there = {i for _, ids in entities_in(sentence) for i in ids}
    return frozenset(w for stems, ids in lacking if ids & there for w in stems)


CONTRAST = re.compile(r"(?:,|;)\s*(?:but|however|whereas|although|though|yet)\b,?\s*", re.I)
CARRIED_SUBJECT = re.compile(r"(?:it|they|this|these|he|she)\b", re.I)


def _contrasted_clause(
    sentence: str,
    wanted: set[str],
    claim_hedged: bool,
    said_otherwise: frozenset[str],
    claim_tokens: frozenset[str],
    subject: frozenset[str],
    after_than: frozenset[str] = frozenset(),
) -> tuple[str, bool | None]:
    """The reading of the one clause around a contrast ("…, but it …") that restates the claim, with the
    claim's condition words the sentence said before it carried by a later clause's pronoun;
    ``(sentence, None)`` when no clause, or more than one, does.

    Why: "Basal cell carcinoma may spread to tissues around the cancer, but it usually does not spread to
    other parts of the body" says "spread" both ways, so as a whole it decides nothing; its second clause
    denies "basal cell carcinoma usually spreads to other parts of the body". Only a pronoun carries the
    subject: in "X does not cause Y, but Z causes Y" the second clause says nothing of X. The clause before
    the contrast is read too: "They usually go away on their own, but if you have a serious case, you might
    need medicine" affirms "hives usually clear up on their own", which the hedge of its second clause had
    kept the whole sentence from saying. Two clauses that both decide decide nothing."""
    cuts = list(CONTRAST.finditer(sentence))
    readings: list[tuple[str, bool]] = []
    if cuts:  # the clause before the contrast stands on its own ("They usually go away on their own, but …")
        first = sentence[: cuts[0].start()]
        way = reading(first, wanted, claim_hedged, said_otherwise, claim_tokens, after_than)
        if way is not None:
            readings.append((first, way))
    for n, cut in enumerate(cuts):
        clause = sentence[cut.end() : cuts[n + 1].start() if n + 1 < len(cuts) else len(sentence)]
        if not CARRIED_SUBJECT.match(clause):
            continue
        before = claim_stems(sentence[: cut.start()], 2) & subject
        way = reading(clause, wanted, claim_hedged, said_otherwise | before, claim_tokens, after_than)
        if way is not None:
            readings.append((clause, way))
    return readings[0] if len(readings) == 1 else (sentence, None)


def _opposite_pair(sentence: str, wanted: set[str], claim_tokens: frozenset[str]) -> tuple[str, str] | None:
    """The claim word a sentence leaves out and the exclusive opposite it says instead, if it does."""
    said = {claim_stem(m.group()) for m in _WORD.finditer(sentence)}
    hit = _opposite_in(sentence, wanted - said, claim_tokens)
    return (hit[0], hit[1]) if hit else None


def written_as(word: str, text: str) -> str:
    """``word`` as ``text`` writes it ("decrease" of the checked question is "decreases" in the reply), or
    ``word`` itself when the text has no form of it."""
    return next(
        (m.group() for m in _WORD.finditer(text) if opposite_key(m.group()) == opposite_key(word)), word
    )


def restated(
    question: str,
    passages: list[str],
    claim_hedged: bool = False,
    titles: list[str] | None = None,
    conditions: tuple[str, ...] = (),
    entities_in: EntityFinder | None = None,
) -> Restatement | None:
    """The verdict the passages' own words give the claim's positive form ``question``, or ``None``.

    ``conditions`` are the conditions the claim names (as written there); a passage whose title (``titles``,
    one per passage) names one may leave that condition's words out of the deciding sentence.
    ``entities_in`` finds a text's KG entity mentions: a claim's entity the sentence names by another of
    its KG names counts as said ("heart attack" for "myocardial infarction", "human papillomavirus" for
    "HPV")."""
    question = one_form(question)
    wanted = claim_words(question)
    tokens = frozenset(m.group().lower() for m in _WORD.finditer(question))
    than = after_than_words(question, wanted)
    as_sentence = question.rstrip(" ?") + "."
    if len(wanted) < MIN_CLAIM_WORDS or reading(as_sentence, wanted, True, frozenset(), tokens) is not True:
        return None  # a claim that negates some of its own words ("… who have no signs") is not read
    named_words = [claim_stems(one_form(c), 2) & wanted for c in conditions]
    claim_entities = [
        (stems, ids)
        for surface, ids in (entities_in(question) if entities_in else [])
        if (stems := frozenset(claim_stems(surface, 2) & wanted))
    ]
    subject = frozenset(w for words in named_words for w in words)
    found: list[Restatement] = []
    for n, text in enumerate(passages):
        title = claim_stems(titles[n], 2) if titles and n < len(titles) else set()
        from_title = frozenset(w for words in named_words if words and words <= title for w in words)
        for s, e in sentences(text):
            sentence = text[s:e]
            written = one_form(sentence)  # read in the claim's forms; quoted as the page says it
            said = from_title | _named_otherwise(written, wanted - from_title, claim_entities, entities_in)
            part, way = written, reading(written, wanted, claim_hedged, said, tokens, than)
            if way is None:  # "X may spread nearby, but it usually does not spread to other parts of …"
                part, way = _contrasted_clause(written, wanted, claim_hedged, said, tokens, subject, than)
            if way is not None:
                pair = None if way else _opposite_pair(part, wanted - from_title, tokens)
                found.append(Restatement(n, sentence, way, pair))
    if not found or len({r.affirms for r in found}) > 1:
        return None  # nothing restates it, or the passages say both
    return found[0]
