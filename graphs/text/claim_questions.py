"""Claims -> yes/no questions for the claim checker (pure text, no model, no tagger).

Why: the 3-class cross-encoder that checks a colleague's reply was trained on BioASQ / PubMedQA yes/no
QUESTIONS ("Is baloxavir effective for influenza?", "Does X reduce Y?"), so each claim is shown to it in
that shape, and always in its POSITIVE form: "Ibuprofen is not effective for fever" is asked as "Is
ibuprofen effective for fever?" and the caller flips the verdict. The inverse, ``statement_from_question``
(used to build a claim benchmark out of the same question sets), lives in ``graphs.text.claim_statements``
and is re-exported here.

Why rules and not a parser: EviGraph ships no POS tagger, and claims are short and formulaic (subject, one
auxiliary or verb, predicate). A small lexicon (``graphs.text.claim_words``: auxiliaries, ~400 verbs of
clinical writing, function words) plus a few morphological tests ("-s" after a noun, "-ed" not followed by
a preposition) finds the main verb well enough; when it cannot, the rewriting says so ("Is it true that
...?") instead of guessing.

Why negation is decided at the predicate and not with ``graphs.text.negation``: NegEx answers "is this
MENTION negated?" within a five-token window, so in "Patients with no history of bleeding should receive
warfarin" it (rightly) negates *bleeding*, yet the claim is positive. Here a cue only counts when it
belongs to the main predicate: ``not``/``n't``/``never`` on the main auxiliary or verb, ``no`` right after
it ("has no benefit"), a negated predicate adjective ("ineffective"), a negating subject determiner ("No
trial has shown ...", "Neither X nor Y"), "fails to"/"lacks", or a denying frame ("There is no evidence
that X"). The question replaces the cue by its positive twin (never -> ever, no -> any). NegEx's pseudo-
trigger list does not carry over either: "no cure", "not known", "not cause" are pseudo-negations of a
mention but real denials in a claim ("There is no cure for X" asks "Is there any cure for X?"); only "not
only / just / merely" stay non-negating here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from graphs.text.claim_words import (
    ADVERBS,
    AFTER_PARTICIPLE,
    AUX_FORMS,
    AUXILIARIES,
    BE,
    CONTRACTIONS,
    DETERMINERS,
    HAVE,
    HEDGE_ADVERBS,
    IMPERATIVES,
    LEAD_WORDS,
    MODALS,
    NEGATED_ADJECTIVES,
    NOT_BEFORE_VERB,
    NOT_VERB_S,
    NOUNISH,
    PLURAL_NOUNS,
    PLURAL_PRONOUNS,
    POSITIVE,
    PREPOSITIONS,
    is_adverb,
    join,
    key,
    lemma_of,
    looks_adjectival,
    lower_first,
)

_NEG_PREFIX = re.compile(
    r"^(?:(?:there\s+is|there\s+are)\s+)?no\s+(?:good\s+|convincing\s+|clear\s+|strong\s+|robust\s+|"
    r"reliable\s+|high-quality\s+)?(?:evidence|data|proof)\s+(?:\w+\s+)?that\s+|"
    r"^it\s+is\s+(?:not\s+true|untrue|false|incorrect|wrong|a\s+myth)\s+that\s+|^not\s+true\s+that\s+|"
    r"^(?:studies|trials|data|the\s+evidence|evidence|research)\s+(?:do\s+not|don't|does\s+not|doesn't|did\s+not|"
    r"didn't)\s+(?:show|suggest|support|demonstrate)\s+that\s+",
    re.IGNORECASE,
)
"""A denying frame around a positive claim: the claim is the part after it, negated."""
_HEDGE_PREFIX = re.compile(
    r"^(?:there\s+is\s+)?(?:some|limited|weak|emerging|recent|growing|low-quality)\s+(?:evidence|data|studies|"
    r"research)\s+(?:\w+\s+)?(?:suggests?|indicates?|shows?|supports?)?\s*that\s+|"
    r"^it\s+is\s+(?:possible|likely|probable|conceivable|plausible)\s+that\s+|"
    r"^(?:i|we)\s+(?:think|believe|suspect|feel|guess|reckon)\s+(?:that\s+)?|"
    r"^(?:probably|possibly|perhaps|maybe|likely|arguably|presumably),?\s+",
    re.IGNORECASE,
)
_NEUTRAL_PREFIX = re.compile(
    r"^(?:(?:the\s+)?(?:studies|trials|data|evidence|research|guidelines|literature|meta-analyses)|it)\s+"
    r"(?:\w+\s+)?(?:shows?|showed|demonstrates?|demonstrated|indicates?|confirms?|states?|says?|"
    r"is\s+(?:well[\s-]+)?(?:known|established|accepted|clear|true|recognised|recognized))\s+that\s+|"
    r"^(?:remember|note|bear\s+in\s+mind)\s+that\s+",
    re.IGNORECASE,
)
"""Reporting frames that neither deny nor hedge ("Studies show that X"): the claim is X."""
HEDGE_CUES = re.compile(
    r"\b(?:some\s+evidence\s+suggests|may|might|could|possibly|probably|perhaps|maybe|potentially|"
    r"(?<!more\s)(?<!less\s)(?<!most\s)likely|appears?\s+to|seems?\s+to|suggests?|it\s+is\s+possible)\b"
    r"(?!-)",
    re.IGNORECASE,
)
"""Hedge cues; "likely" after more/less/most compares risks and is no hedge, "May-Thurner" is a name."""
_DISCOURSE = re.compile(
    r"(?:(?:however|also|moreover|furthermore|additionally|therefore|thus|hence|so|and|but|then|plus|instead|"
    r"importantly|indeed|notably|conversely|similarly|likewise)(?:\s*[,:]\s*|\s+)|"
    r"(?:in\s+addition|overall|in\s+short|in\s+general|generally|actually|yes|no|well|ok|okay|in\s+fact|"
    r"of\s+course|in\s+contrast|by\s+contrast|on\s+the\s+other\s+hand|honestly|basically|essentially|"
    r"in\s+my\s+(?:experience|opinion|view)|personally|to\s+be\s+honest|as\s+far\s+as\s+i\s+know|afaik|iirc|"
    r"from\s+memory)"
    r"\s*[,:!]\s*)",
    re.IGNORECASE,
)
"""Discourse markers that open a sentence but are no part of the claim ("However, insulin is ...")."""

Kind = Literal["be", "modal", "have", "do", "lex"]


@dataclass(frozen=True)
class Verb:
    """The main verb of a clause: its token index, kind, lemma and inflection."""

    index: int
    kind: Kind
    lemma: str
    form: str  # "3sg" | "base" | "past" | "aux"


@dataclass(frozen=True)
class Rewrite:
    """A claim as the yes/no question of its positive form; ``subject`` lets a next "it" be resolved."""

    question: str
    negated: bool
    cue: str | None
    subject: str | None


def strip_discourse(text: str) -> int:
    """Characters taken by leading discourse markers ("However, also ..."), 0 if none."""
    pos = 0
    while (match := _DISCOURSE.match(text, pos)) and pos < match.end() < len(text):
        pos = match.end()
    return pos


def hedge_cue(text: str) -> str | None:
    """The first hedge cue of a claim ("may", "probably", "some evidence suggests"), lower-cased."""
    match = HEDGE_CUES.search(text)
    return re.sub(r"\s+", " ", match.group().lower()) if match else None


def _plural_subject(keys: list[str], raw: list[str], i: int) -> bool:
    """Whether the words before ``keys[i]`` look plural, so that a base-form verb there is finite."""
    j = next((j for j in range(i - 1, -1, -1) if not is_adverb(keys[j])), i - 1)  # "they only shorten"
    prev = keys[j]
    if raw[i - 1].endswith(")") and i >= 2 and "(" in raw[i - 1]:
        prev = keys[i - 2]  # "ACE inhibitors (ACEi) reduce"
    if prev in PLURAL_PRONOUNS or prev in PLURAL_NOUNS:
        return True
    if "and" in keys[max(0, i - 12) : i]:
        return True
    for p in range(1, min(i, 40)):  # the head noun before a PP: "Mutations in GRK1 cause ..."
        if keys[p] in PREPOSITIONS or raw[p].startswith("("):
            head = keys[p - 1]
            if head in PLURAL_NOUNS or (
                head.endswith("s") and not head.endswith(("ss", "us", "is")) and len(head) > 3
            ):
                return True
            break
    return prev.endswith("s") and not prev.endswith(("ss", "us", "is")) and len(prev) > 2


def _classify(keys: list[str], raw: list[str], i: int) -> Verb | None:
    """Whether token ``i`` (never the clause's first) is a finite verb, and which kind."""
    word, prev = keys[i], keys[i - 1]
    if word in CONTRACTIONS:
        base = CONTRACTIONS[word]
        kind: Kind = "be" if base in BE else "modal" if base in MODALS else "have" if base in HAVE else "do"
        return Verb(i, kind, base, "aux")
    if word in AUXILIARIES:
        if word in MODALS and prev in DETERMINERS:
            return None
        kind = "be" if word in BE else "modal" if word in MODALS else "have" if word in HAVE else "do"
        return Verb(i, kind, word, "aux")
    found = lemma_of(word)
    if found is None or prev in DETERMINERS or prev in PREPOSITIONS or prev == "to" or raw[i][:1].isupper():
        return None
    if looks_adjectival(prev, raw[i - 1]):
        return None  # "genetic influences", "clinical trials": a noun after an adjective
    lemma, form = found
    if form == "base" and not _plural_subject(keys, raw, i):
        return None
    following = lemma_of(keys[i + 1]) if i + 1 < len(keys) else None
    if form == "3sg" and following and following[1] == "base" and keys[i + 1] not in NOUNISH:
        return None  # "Whole-genome duplicates tend to ...": a plural noun, the verb follows
    if form == "3sg" and i + 1 < len(keys) and keys[i + 1] in AUX_FORMS:
        return None  # "HbA1c targets should be ...": the auxiliary is the verb
    if form == "past" and (keys[i + 1] if i + 1 < len(keys) else "") in AFTER_PARTICIPLE:
        return None  # "patients treated with X ..." is a reduced relative clause
    return Verb(i, "lex", lemma, form)


def _guess_3sg(keys: list[str], raw: list[str], i: int) -> Verb | None:
    """The "-s after a noun" test for verbs outside the lexicon ("Metformin potentiates lactic acidosis")."""
    word, prev = keys[i], keys[i - 1]
    if (
        len(word) < 4
        or not word.isalpha()
        or not word.endswith("s")
        or word.endswith(NOT_VERB_S)
        or raw[i][:1].isupper()
        or word in ADVERBS
        or prev in NOT_BEFORE_VERB
        or prev.replace(".", "").replace(",", "").isdigit()  # "than 60 years", "for 3 months": a counted noun
        or looks_adjectival(prev, raw[i - 1])
        or (prev.endswith("s") and not prev.endswith(NOT_VERB_S))
        or i + 1 >= len(keys)
    ):
        return None
    if word.endswith("ies"):
        lemma = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        lemma = word[:-2]
    else:
        lemma = word[:-1]
    return Verb(i, "lex", lemma, "3sg")


def main_verb(keys: list[str], raw: list[str], *, guess: bool = True) -> Verb | None:
    """The first finite verb of a clause outside a relative clause ("Patients who take X should ...").

    With ``guess=False`` only auxiliaries and lexicon verbs count, not the "-s after a noun" test (the
    clause splitter asks that much before it cuts "..., and gene expression in immune cells").
    """
    for finder in (_classify, _guess_3sg) if guess else (_classify,):
        skipping, i = False, 1
        while i < len(keys):
            if keys[i] in {"who", "which", "that", "whose", "whom"} and keys[i - 1] not in PREPOSITIONS:
                skipping, i = True, i + 1
                continue
            verb = finder(keys, raw, i)
            i += 1
            if verb is None:
                continue
            if not skipping:
                return verb
            skipping = False  # the relative clause's own verb: skip it and its auxiliary chain
            while i < len(keys) and (is_adverb(keys[i]) or keys[i] in {"not", "been", "be"} | HAVE):
                i += 1
    return None


def has_subject(keys: list[str], verb: Verb) -> bool:
    """Whether the clause has its own subject before the verb (not just "and also reduces ...")."""
    return any(k and not is_adverb(k) and k not in {"not", "then", "never"} for k in keys[: verb.index])


def _front_adverbial(tokens: list[str], keys: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split off a fronted adverbial: the last comma before the main clause's own subject and verb."""
    if keys[0] not in LEAD_WORDS:
        return [], tokens, keys
    for i, token in enumerate(tokens[: min(len(tokens) - 1, 60)]):  # bounded: 10,000 commas stay linear
        rest_keys, rest = keys[i + 1 :], tokens[i + 1 :]
        if not token.endswith(",") or rest_keys[0] in {"and", "or", "nor", "but"}:
            continue
        verb = main_verb(rest_keys, rest)
        if verb is None or not has_subject(rest_keys, verb):
            continue
        if any(t.endswith(",") for t in rest[: verb.index]):
            continue
        front = tokens[: i + 1]
        front[-1] = front[-1][:-1]
        lower_first(front)
        return front, rest, rest_keys
    return [], tokens, keys


def _strip_frames(text: str) -> tuple[str, bool, str | None]:
    """Remove reporting/hedging/denying frames: (the framed claim, whether a frame denied it, the cue)."""
    negated, cue = False, None
    for _ in range(3):  # frames nest rarely: "I think there is no evidence that ..."
        neg = _NEG_PREFIX.match(text)
        frame = neg or _HEDGE_PREFIX.match(text) or _NEUTRAL_PREFIX.match(text)
        if frame is None or frame.end() >= len(text):
            break
        if neg:
            negated, cue = not negated, re.sub(r"\s+", " ", neg.group().strip().lower())
        text = text[frame.end() :]
    return text, negated, cue


def rewrite(
    claim_text: str, *, pronoun_subject: str | None = None, they_subject: str | None = None
) -> Rewrite:
    """The question of a claim's positive form; ``pronoun_subject`` replaces an "it"/"this"/"that" subject
    and ``they_subject`` (else ``pronoun_subject``) a "they" subject."""
    text = re.sub(r"\s+", " ", claim_text).strip().strip("\"“”'‘’").rstrip(".!?;:, ").strip()
    text = text[strip_discourse(text) :]
    text, negated, cue = _strip_frames(text)
    text = re.sub(r"\b([Ii]t|[Tt]here|[Tt]hat)['’]s\b", r"\1 is", text)
    tokens = text.replace("’", "'").split()
    keys = [key(t) for t in tokens]
    if not tokens:
        return Rewrite("", negated, cue, None)
    if keys[0] == "not" and len(keys) > 2:  # "Not all patients need X" -> "Do all patients need X?"
        negated, cue = not negated, "not"
        tokens, keys = tokens[1:], keys[1:]
    front, tokens, keys = _front_adverbial(tokens, keys)
    if front:  # "In yeast, it is well established that X" -> X
        inner, inner_negated, inner_cue = _strip_frames(" ".join(tokens))
        if inner != " ".join(tokens):
            tokens = inner.split()
            keys = [key(t) for t in tokens]
            negated, cue = negated != inner_negated, cue or inner_cue
    # Hedging adverbs leave the question ("X probably reduces Y" -> "Does X reduce Y?"); hedged stays set.
    kept = [n for n, k in enumerate(keys) if k not in HEDGE_ADVERBS or n == 0]
    kept = [n for n in kept if not (keys[n] == "likely" and n + 1 < len(keys) and lemma_of(keys[n + 1]))]
    tokens, keys = [tokens[n] for n in kept], [keys[n] for n in kept]
    question, neg_here, cue_here, subject = _question(tokens, keys, pronoun_subject, they_subject)
    if neg_here:
        negated, cue = not negated, cue if cue is not None else cue_here
    if front:
        question = f"{question} {join(front)}"
    return Rewrite(question.strip() + "?", negated, cue, subject)


def _imperative(tokens: list[str], keys: list[str]) -> tuple[str, bool, str | None, str | None] | None:
    """ "Give aspirin" -> "Is it recommended to give aspirin"; "Don't give X" / "Never give X" are negated."""
    negated, cue, start = False, None, 0
    if keys[0] in {"don't", "never"}:
        negated, cue, start = True, keys[0], 1
    elif keys[:2] == ["do", "not"]:
        negated, cue, start = True, "do not", 2
    if start >= len(keys) or keys[start] not in IMPERATIVES:
        return None
    following = keys[start + 1] if start + 1 < len(keys) else ""
    if following in PREPOSITIONS | AUXILIARIES | {"and", "or", ""}:
        return None  # "Use of aspirin is ..." is a noun phrase
    return f"Is it recommended to {join([tokens[start].lower(), *tokens[start + 1 :]])}", negated, cue, None


def _question(
    tokens: list[str], keys: list[str], pronoun_subject: str | None, they_subject: str | None = None
) -> tuple[str, bool, str | None, str | None]:
    """(question without "?", negated, cue, subject) of a clause without frame or fronted adverbial."""
    imperative = _imperative(tokens, keys)
    if imperative is not None:
        return imperative
    verb = main_verb(keys, tokens)
    if verb is None or not has_subject(keys, verb):
        body = list(tokens)
        lower_first(body)
        return f"Is it true that {join(body)}", False, None, None
    subject, subject_keys = list(tokens[: verb.index]), keys[: verb.index]
    negated, cue = False, None
    if subject_keys[0] in {"no", "none", "neither"}:  # "No trial has shown ...", "Neither X nor Y"
        negated, cue = True, subject_keys[0]
        subject = [POSITIVE.get(k, t) for t, k in zip(subject, subject_keys, strict=True)]
    pre: list[str] = []  # adverbs between subject and verb: "X never causes Y"
    while len(subject) > 1 and (is_adverb(key(subject[-1])) or key(subject[-1]) in {"never", "not"}):
        word = subject.pop()
        if key(word) in {"never", "not"} and not negated:
            negated, cue, word = True, key(word), "ever" if key(word) == "never" else ""
        pre.insert(0, word)
    referent = (they_subject or pronoun_subject) if subject_keys[0] == "they" else pronoun_subject
    if referent and len(subject) == 1 and key(subject[0]) in {"it", "they", "this", "that"}:
        subject = referent.split()
    else:
        lower_first(subject)
    rest, rest_keys = list(tokens[verb.index + 1 :]), keys[verb.index + 1 :]
    if pronoun_subject and "it" in rest_keys and join(subject).lower() != pronoun_subject.lower():
        # "… and that antibiotics cure it": the object "it" is the subject before (cystic fibrosis), so the
        # claim is retrieved and checked about it, not about "it".
        at = rest_keys.index("it")
        rest[at] = pronoun_subject + rest[at][2:]
    word = keys[verb.index]
    aux = CONTRACTIONS.get(word, word)
    if word in CONTRACTIONS and not negated:
        negated, cue = True, word
    j = 0  # negation inside the verb group: aux [adverbs] not/never [be/been] ...
    while j < len(rest_keys) and (is_adverb(rest_keys[j]) or rest_keys[j] in {"not", "never"}):
        pseudo = rest_keys[j : j + 2] in (["not", "only"], ["not", "just"], ["not", "merely"])
        if rest_keys[j] in {"not", "never"} and not negated and not pseudo:
            negated, cue = True, f"{aux} not" if rest_keys[j] == "not" else "never"
            rest[j] = "ever" if rest_keys[j] == "never" else ""
        j += 1
    following = rest_keys[j] if j < len(rest_keys) else ""
    participle = following == "been" or lemma_of(following) is not None or following.endswith("ed")
    lexical_have = verb.kind == "have" and not participle  # "has no benefit" vs "has been shown"
    while j < len(rest_keys) and (rest_keys[j] in {"be", "been", "being"} or is_adverb(rest_keys[j])):
        j += 1
    nxt = rest_keys[j] if j < len(rest_keys) else ""
    if nxt in {"no", "none"} and not negated:
        negated, cue, rest[j] = True, (f"{aux} {nxt}" if verb.kind != "lex" else nxt), "any"
    elif nxt in NEGATED_ADJECTIVES and verb.kind in {"be", "modal"} and not negated:
        negated, cue = True, nxt
        rest[j] = NEGATED_ADJECTIVES[nxt] + rest[j][len(nxt) :]
    elif nxt == "without" and verb.kind == "be" and not negated:  # "X is without benefit"
        negated, cue, rest[j] = True, f"{aux} without", "any"
        lexical_have, aux = True, {"is": "has", "are": "have", "was": "had", "were": "had"}.get(aux, aux)
    subject_text = join(subject)
    if verb.kind == "lex" or lexical_have:
        lemma, form = verb.lemma, verb.form
        if lexical_have:
            lemma, form = "have", {"has": "3sg", "have": "base", "had": "past"}.get(aux, "3sg")
        tail = rest
        if lemma in {"fail", "appear", "seem", "tend"} and rest_keys[:1] == ["to"] and len(rest_keys) > 1:
            if lemma == "fail" and not negated:
                negated, cue = True, f"{word} to"
            lemma, tail = rest_keys[1], rest[2:]
        elif lemma == "lack" and not negated:
            negated, cue, lemma = True, word, "have"
        do = {"3sg": "Does", "base": "Do", "past": "Did"}.get(form, "Does")
        return join([do, subject_text, *pre, lemma, *tail]), negated, cue, subject_text
    front = {"may": "can", "might": "can", "could": "can"}.get(aux, aux)
    return f"{front.capitalize()} {subject_text} {join([*pre, *rest])}", negated, cue, subject_text


def question_form(claim_text: str) -> tuple[str, bool, str | None]:
    """(yes/no question of the claim's positive form, whether the claim was negated, the negation cue)."""
    result = rewrite(claim_text)
    return result.question, result.negated, result.cue
