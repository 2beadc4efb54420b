"""Split a colleague's reply into checkable atomic claims, each with its yes/no question (pure text).

Why: ``evigraph ask --task check_reply "Colleague says: ..."`` checks a reply claim by claim with a
3-class cross-encoder (supported / contradicted / not enough evidence). A verdict on a whole paragraph is
useless to a clinician -- "aspirin is adequate, but insulin is never needed" can be half right -- so the
reply is cut into sentences and clauses that each assert one thing, with their exact spans (the answer
highlights them in the reply). Each claim also carries the yes/no question of its positive form
(``graphs.text.claim_questions``), the shape the cross-encoder was trained on, plus whether it was negated
(the caller flips the verdict) and hedged (the caller softens it).

Why rules: the reply is a few sentences of clinical English; sentence and clause boundaries follow from
punctuation, a few conjunctions and whether each side has its own subject and finite verb. A model would
add latency and a dependency for little gain, and would not give exact character spans.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphs.text.claim_questions import (
    has_subject,
    hedge_cue,
    key,
    main_verb,
    question_form,
    rewrite,
    strip_discourse,
)
from graphs.text.claim_statements import action_object, claim_source, part_kind, statement_from_question
from graphs.text.claim_words import (
    CONJUNCTIONS,
    ENGLISH_WORDS,
    FOREIGN_WORDS,
    LEAD_WORDS,
    PART_SPLIT,
    REPORT_FRAME,
    SOURCE_PREFIX,
    is_adverb,
    looks_plural,
)

__all__ = ["Claim", "ReplyClaims", "not_english", "question_form", "split_reply", "statement_from_question"]

Problem = Literal["no_claim", "question", "not_english"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


class Claim(BaseModel):
    """One checkable claim of a reply; ``reply[start:end] == text``."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="The claim as the reply states it (trimmed, no trailing period).")
    start: int = Field(ge=0, description="Start of the claim in the original reply text.")
    end: int = Field(ge=0, description="End (exclusive) of the claim in the original reply text.")
    question: str = Field(description="Yes/no question of the claim's positive (un-negated) form.")
    negated: bool = Field(description="The claim denies something; the caller flips the verdict.")
    negation_cue: str | None = None
    hedged: bool = Field(description='The claim is hedged ("may", "probably", "some evidence suggests").')
    hedge_cue: str | None = None


class ReplyClaims(BaseModel):
    """The claims of a reply, what was skipped, and why nothing could be checked (if so)."""

    model_config = ConfigDict(frozen=True)

    claims: list[Claim]
    left_out: int = Field(ge=0, description="Checkable claims beyond max_claims.")
    not_checkable: list[str] = Field(description="Sentences or clauses skipped (questions, greetings, ...).")
    problem: Problem | None = None


_SPEAKER = (
    r"(?:(?:my|a|the|our|their|your|his|her)\s+)?(?:(?:senior|junior|other|fellow|on-call|night)\s+)?"
    r"(?:colleague|registrar|consultant|resident|attending|fellow|intern|nurse|pharmacist|gp|doctor|physician|"
    r"surgeon|specialist|\w+ologist|\w+iatrician|team|boss|supervisor|senior|someone|he|she|they|"
    r"(?:dr\.?|prof\.?|professor|mr\.?|mrs\.?|ms\.?|nurse)\s+[A-Z][\w'-]+)"
)
_REPORT = (
    r"(?:says|said|wrote|writes|states|stated|claims|claimed|thinks|believes|believed|told\s+me|tells\s+me|"
    r"argues|argued|mentioned|replied|answered|insists|insisted|reckons|reckoned|feels|commented|responded)"
)
_PREFIX = re.compile(
    rf"\s*(?:{_SPEAKER}(?:'s|’s)?\s+(?:reply|answer|response|message|note|comment|view|opinion)\s*[:\-–—]|"
    rf"{_SPEAKER}\s+{_REPORT}(?:\s+that\b)?\s*[:,\-–—]?|"
    r"(?:(?:the|their|his|her|my|our)\s+)?(?:reply|answer|response|quote|message|comment|colleague|claim)"
    r"\s*[:\-–—])\s*",
    re.IGNORECASE,
)
"""A reported-speech prefix ("Colleague says:", "Dr Smith said that", "Their answer:") before the reply."""
_SUFFIX = re.compile(rf"[\"”’'],?\s+{_SPEAKER}\s+{_REPORT}[.!]?\s*$", re.IGNORECASE)
_BOUNDARY = re.compile(r"(?<![.!?])[.!?]++[\"'”’)\]]*+(?=\s|$)|\n")
"""Sentence ends; the look-behind and possessive quantifiers keep a run of 100,000 dots linear."""
_ABBREVIATIONS = _words(
    "e.g i.e eg ie vs dr mr mrs ms prof al approx fig no cf st jr sr inc ca viz resp dept est nos ref "
    "mg mcg kg ml min max pt pts sec hr hrs wk wks yr yrs mo"
)
_NEXT_CHAR = re.compile(r"\S")
_INITIALS = re.compile(r"(?:[a-z]\.)+[a-z]")
_BULLET = re.compile(r"\s*(?:[-*•·–]|\d{1,2}[.)])\s+")
_JOIN = re.compile(
    r";\s*(?:however,?\s*)?|,\s*(?:and|but|whereas|while|although|though|yet)\s+|(?<!\s)\s+(?:and|but|whereas)\s+",
    re.IGNORECASE,
)
"""Candidate clause joins; a join splits only when both sides have a finite verb and the right its subject."""
_GREETING = re.compile(
    r"(?:thanks|thank\s+you|many\s+thanks|thx|cheers|hope\s+(?:this|that|it)\s+helps|hi|hello|hey|dear|"
    r"kind\s+regards|let\s+me\s+know|happy\s+to\s+help|you're\s+welcome|feel\s+free|good\s+question|"
    r"take\s+care)\b|"
    r"(?:regards|best(?:\s+wishes)?|good\s+luck|sure|ok|okay|great|sounds\s+good|no\s+problem)\s*(?:[,.!]|$)",
    re.IGNORECASE,
)
"""Greetings and sign-offs; words that may open a claim ("Great saphenous vein ...") only before a stop."""
_META = re.compile(
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)?\s+(?:not\s+sure|unsure|don't\s+know|do\s+not\s+know|have\s+no\s+idea|"
    r"would\s+(?:check|ask|discuss|defer))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_TRIM_END = ".!?;:, \t\r\n\"'”’»)"
_TRIM_START = " \t\r\n\"'“‘«„("


def _content(text: str, start: int, end: int) -> tuple[int, int]:
    """Trim a span: surrounding space, bullets, quotes, discourse markers, trailing punctuation.

    A bracket is trimmed only when the span has no partner for it, so "(cf. warfarin 60%)" keeps its ")".
    """
    while True:
        before = (start, end)
        has_close, has_open = text.find(")", start, end) >= 0, text.find("(", start, end) >= 0
        while start < end and text[start] in _TRIM_START and not (text[start] == "(" and has_close):
            start += 1
        bullet = _BULLET.match(text, start, end)
        if bullet:
            start = bullet.end()
        start += strip_discourse(text[start : min(end, start + 200)])
        while end > start and text[end - 1] in _TRIM_END and not (text[end - 1] == ")" and has_open):
            end -= 1
        if (start, end) == before:
            return start, end


def _body(reply: str) -> tuple[int, int]:
    """The reply without a reported-speech prefix ("Colleague says:") or suffix ('", he said.').

    Quotes are left in place; each sentence is trimmed of them later, keeping spans exact.
    """
    prefix = _PREFIX.match(reply)
    start = prefix.end() if prefix and prefix.end() < len(reply) else 0
    tail = max(start, len(reply) - 200)  # the suffix is short; searching only the tail keeps this linear
    suffix = _SUFFIX.search(reply, tail)
    return start, suffix.start() if suffix and suffix.start() > start else len(reply)


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans: at . ! ? before whitespace, and newlines, but not after abbreviations or initials."""
    spans: list[tuple[int, int]] = []
    begin, seen = start, -1  # seen: the next non-space character found last, so each gap is scanned once
    for match in _BOUNDARY.finditer(text, start, end):
        if seen < match.end():
            nxt = _NEXT_CHAR.search(text, match.end(), end)
            seen = nxt.start() if nxt else end
        following = text[seen] if seen < end else ""
        if match.group() == "\n":
            if following.islower():
                continue  # a wrapped line, not a new sentence
            cut = match.start()
        else:
            if match.group()[0] == "." and len(match.group().rstrip("\"'”’)]")) == 1:
                word = re.search(r"(\S+)$", text[max(begin, match.start() - 30) : match.start()])
                before = word.group(1).lower().lstrip("(\"'“") if word else ""
                abbreviation = before in _ABBREVIATIONS or len(before) == 1 or _INITIALS.fullmatch(before)
                if following.islower() or (abbreviation and not (before == "etc" and following.isupper())):
                    continue
            cut = match.end()
        spans.append((begin, cut))
        begin = match.end()
    spans.append((begin, end))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _verb_info(text: str, *, guess: bool) -> tuple[bool, bool]:
    """(has a finite verb, has its own subject) of a clause candidate."""
    body = text[strip_discourse(text.strip()) :] if text.strip() else ""
    raw = body.split()
    keys = [key(t) for t in raw]
    verb = main_verb(keys, raw, guess=guess)
    return verb is not None, verb is not None and has_subject(keys, verb)


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Clause spans of a sentence: joins split only between two clauses that each have subject and verb."""
    pieces: list[tuple[int, int, bool]] = []
    begin, after_semicolon = start, False
    for match in _JOIN.finditer(text, start, end):
        pieces.append((begin, match.start(), after_semicolon))
        begin, after_semicolon = match.end(), match.group().startswith(";")
    pieces.append((begin, end, after_semicolon))
    clauses: list[list[int]] = []
    current_has_verb = False
    for piece_start, piece_end, semicolon in pieces:
        piece = text[piece_start:piece_end]
        has_verb = _verb_info(piece, guess=True)[0]
        # the right side must show a lexicon verb: "-s after a noun" is too weak a reason to cut
        own_clause = bool(clauses) and _verb_info(piece, guess=False) == (True, True)
        if clauses and current_has_verb and not own_clause and predicate_only(piece):
            clauses.append([piece_start, piece_end])  # "… is spread by ticks and cannot be cured …"
            continue
        # A semicolon separates statements even after an instruction the lexicon has no verb for ("start
        # allopurinol during the flare; NSAIDs do not help" is two claims).
        if clauses and semicolon and own_clause:
            current_has_verb = True
        if clauses and not (current_has_verb and own_clause):
            clauses[-1][1] = piece_end  # no subject of its own ("..., and should be given at night")
            current_has_verb = current_has_verb or has_verb
            continue
        clauses.append([piece_start, piece_end])
        current_has_verb = has_verb
    return [(s, e) for s, e in clauses]


def predicate_only(text: str) -> bool:
    """A conjunct with no subject of its own that opens on a finite verb ("cannot be cured with
    antibiotics", "reduces weight", "also lowers blood pressure"): a second claim about the clause's subject.

    Why: "Lyme disease is spread by ticks and cannot be cured with antibiotics." was one claim, checked as
    "Is lyme disease spread by ticks and cannot be cured with antibiotics?", and the knowledge graph's
    tick edge called the whole of it *supported* — its false half included. Not a past form ("… and treated
    with B" is "is treated", not a claim of its own) and not a conjunct with a subject ("clopidogrel are
    given")."""
    raw = ("it " + text.strip()).split()
    keys = [key(t) for t in raw]
    verb = main_verb(keys, raw, guess=False)
    return (
        verb is not None
        and verb.form != "past"
        and all(is_adverb(k) or k in {"not", "never"} for k in keys[1 : verb.index])
    )


def bare_predicate(text: str) -> bool:
    """A clause without its own subject that is a predicate (:func:`predicate_only`): checked as a claim about
    the subject of the claim before it."""
    return _verb_info(text, guess=False) != (True, True) and predicate_only(text)


REPORTING_VERB = re.compile(
    r"\b(?:said|says|say|told|tells|tell|thinks|think|thought|believes?|claim(?:s|ed)?|wrote|writes|"
    r"mentioned|stated|states|explained|reckons?|suggested|advised|insists?|insisted)\b",
    re.IGNORECASE,
)
"""A verb that reports what someone said before the first claim of a sentence: only then is a later "and
that X" a second reported clause rather than "that drug …"."""


def _after_complementizer(text: str, start: int, end: int) -> int:
    """The start of a reported clause past its "that": "told the family that X and that Y" reports Y, and
    "that antibiotics cure it" was checked as the question "Do that antibiotics cure it?"."""
    found = re.match(r"that\s+", text[start:end], re.IGNORECASE)
    if found is None or not all(_verb_info(text[start + found.end() : end], guess=True)):
        return start
    return start + found.end()


def _has_verb(text: str) -> bool:
    raw = text.split()
    return main_verb([key(t) for t in raw], raw, guess=False) is not None


def _frame_end(text: str, start: int, end: int) -> tuple[int, bool]:
    """Skip speaker prefixes ("Neuro registrar:") and reporting frames ("My registrar told the family that").

    Returns the claim's new start and whether a frame gave advice ("advised she go" means "she should go").
    """
    advice = False
    for _ in range(3):  # "From the handover: the GP says that X"
        prefix = SOURCE_PREFIX.match(text, start, end)
        if prefix and prefix.end() < end and not _has_verb(text[start : prefix.end() - 1]):
            start = _content(text, prefix.end(), end)[0]
            continue
        frame = REPORT_FRAME.match(text, start, end)
        if frame is None or frame.end() >= end:
            break
        speaker = (frame.group("speaker") or frame.group("source")).split()
        if _has_verb(" ".join(speaker)) or key(speaker[0]) in {
            "i",
            "we",
            "it",
            "there",
            "that",
            "this",
            "which",
        }:
            break  # "I think" hedges (kept for the hedge cue); "Aspirin reduces ... says" is no speaker
        advice = advice or frame.group("advice") is not None
        start = _content(text, frame.end(), end)[0]
    return start, advice


def _parts(text: str, start: int, end: int) -> list[tuple[int, int, str | None]]:
    """A sentence that mixes an action or conclusion with its reason, split; actions dropped beside facts.

    Each kept part comes with what an "it"/"that" opening it refers to (the object of a dropped action).
    """
    cuts = list(PART_SPLIT.finditer(text, start, end))
    pieces: list[tuple[int, int]] = []
    begin = start
    for n, cut in enumerate(cuts):
        right_end = cuts[n + 1].start() if n + 1 < len(cuts) else end
        left, right = text[begin : cut.start()], text[cut.end() : right_end]
        right_keys = right.split()[:1]
        if not right_keys or _verb_info(right, guess=False) != (True, True):
            continue
        if cut.group().strip() == ",":  # a bare comma splits two clauses only
            opener = key(right_keys[0])
            if opener in CONJUNCTIONS | LEAD_WORDS | {"which", "who", "yet", "including"}:
                continue
            left_key = key(left.split()[0]) if left.split() else ""
            if left_key in LEAD_WORDS or (
                part_kind(left) != "action" and _verb_info(left, guess=True) != (True, True)
            ):
                continue
        pieces.append((begin, cut.start()))
        begin = cut.end()
    pieces.append((begin, end))
    if len(pieces) == 1:
        return [(start, end, None)]
    kinds = [part_kind(text[s:e]) for s, e in pieces]
    keep = "fact" if "fact" in kinds else "patient" if "patient" in kinds else None
    kept: list[tuple[int, int, str | None]] = []
    referent: str | None = None
    for (s, e), kind in zip(pieces, kinds, strict=True):
        if keep is None or kind == keep:
            kept.append((s, e, referent))
        elif kind == "action":
            referent = action_object(text[s:e]) or referent
    return kept


def _skip_reason(text: str) -> str | None:
    """Why a sentence or clause is not checkable, or None."""
    words = _WORD.findall(text)
    if not words:
        return "no content"
    if _GREETING.match(text) and len(words) <= 8:
        return "greeting"
    if _META.match(text):
        return "no content"
    if len(words) < 3:
        return "too short"
    return None


def not_english(text: str) -> bool:
    """Mostly non-Latin script, or under 30 % English words where a foreign language's words dominate (a reply
    to check, or a question: the KB, its entity linker and the evidence reader are English)."""
    sample = text[:20_000]
    letters = [c for c in sample if c.isalpha()]
    if not letters:
        return False
    if sum(ord(c) < 0x250 for c in letters) / len(letters) < 0.5:
        return True
    words = [w.lower() for w in _WORD.findall(sample)]
    english = sum(w in ENGLISH_WORDS for w in words)
    foreign = sum(w in FOREIGN_WORDS and w not in ENGLISH_WORDS for w in words)
    return len(words) >= 3 and english / len(words) < 0.3 and foreign > english and foreign >= 2


def split_reply(reply: str, max_claims: int = 8) -> ReplyClaims:
    """The checkable claims of a colleague's reply (at most ``max_claims``, in order) and what was skipped.

    ``problem`` is "question" when the reply only asks, "no_claim" when nothing else is checkable, and
    "not_english" when the reply's words are mostly not English (its claims are still split; the caller
    decides whether the English-trained checker should run on them).
    """
    body_start, body_end = _body(reply)
    spans: list[tuple[int, int, str | None, bool]] = []
    skipped: list[str] = []
    reasons: list[str] = []
    first_sentence = True
    for sent_start, sent_end in _sentences(reply, body_start, body_end):
        raw = reply[sent_start:sent_end].strip()
        sentence_begins = 0 if first_sentence else sent_start  # the first: from the reply's own opening
        first_sentence = False
        sent_start, sent_end = _content(reply, sent_start, sent_end)
        comma = reply.find(", ", sent_start, min(sent_end, sent_start + 30))
        greeting = _GREETING.match(reply, sent_start) is not None and comma > 0
        if greeting and all(_verb_info(reply[comma + 1 : sent_end], guess=True)):
            sent_start, sent_end = _content(reply, comma + 1, sent_end)  # "Hi Anna, aspirin is ..."
        is_question = raw.rstrip("\"'”’)] ").endswith("?")
        reason = "question" if is_question else _skip_reason(reply[sent_start:sent_end])
        if reason is not None:
            skipped.append(raw)
            reasons.append(reason)
            continue
        sent_start, advice = _frame_end(reply, sent_start, sent_end)
        reported = REPORTING_VERB.search(reply, sentence_begins, sent_start) is not None
        for part_start, part_end, referent in _parts(reply, sent_start, sent_end):
            for clause_start, clause_end in _clauses(reply, part_start, part_end):
                clause_start, clause_end = _content(reply, clause_start, clause_end)
                if reported and clause_start > sent_start:
                    clause_start = _after_complementizer(reply, clause_start, clause_end)
                clause = reply[clause_start:clause_end]
                reason = _skip_reason(
                    f"it {clause}" if bare_predicate(clause) else clause
                )  # "reduces weight"
                if reason is None:
                    spans.append((clause_start, clause_end, referent, advice and clause_start == sent_start))
                elif reply[clause_start:clause_end].strip():
                    skipped.append(reply[clause_start:clause_end])
                    reasons.append(reason)
    claims: list[Claim] = []
    singular: str | None = None  # the last subject "it" may stand for, and the last one "they" may
    plural: str | None = None
    previous: str | None = None  # the subject of the claim before: a bare predicate's own
    for start, end, referent, advice in spans[: max(0, max_claims)]:
        text = reply[start:end]
        source = claim_source(text, advice)
        pronoun, they = referent or singular, referent or plural
        if previous and bare_predicate(text):
            source, pronoun, they = f"it {source}", previous, previous  # "cannot be cured with antibiotics"
        result = rewrite(source, pronoun_subject=pronoun, they_subject=they)
        previous = result.subject or previous
        if result.subject:
            if looks_plural(result.subject):
                plural = result.subject
            else:
                singular = result.subject
        cue = hedge_cue(text)
        claims.append(
            Claim(
                text=text,
                start=start,
                end=end,
                question=result.question,
                negated=result.negated,
                negation_cue=result.cue,
                hedged=cue is not None,
                hedge_cue=cue,
            )
        )
    problem: Problem | None = None
    if not_english(reply[body_start:body_end]):
        problem = "not_english"
    elif not spans:
        problem = "question" if reasons and all(r == "question" for r in reasons) else "no_claim"
    return ReplyClaims(
        claims=claims,
        left_out=max(0, len(spans) - max(0, max_claims)),
        not_checkable=skipped,
        problem=problem,
    )
