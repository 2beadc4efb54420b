"""Yes/no questions -> the claims they ask about (pure text, no model, no tagger).

Why: the claim checker's calibration claims and reply-check benchmark (``evals.claim_sets``) are built out
of the BioASQ / PubMedQA yes/no question sets, whose answers then say whether the claim holds.
``statement_from_question`` turns "Does metformin reduce mortality in ...?" into the claim "Metformin
reduces mortality in ...". It is the inverse of ``graphs.text.claim_questions.question_form`` and reads the
same lexicon (``graphs.text.claim_words``).

Why ``None`` is a fine answer: the hard part is where the subject of "Is <subject> <predicate>?" ends,
and without a tagger that boundary is sometimes a guess ("Are bacteria in the genus Clostridium
facultative anaerobes?"). Then no statement is made rather than a wrong one; the coverage on both
question sets is checked in tests/test_claims.py.
"""

from __future__ import annotations

import re

from graphs.text.claim_questions import has_subject, main_verb, strip_discourse
from graphs.text.claim_words import (
    ACTION_LEMMAS,
    ACTION_OPENERS,
    ADJECTIVE_ENDINGS,
    BE,
    COMPARATIVES,
    CONJUNCTIONS,
    DETERMINERS,
    DO,
    ED_NOUNS,
    FINAL_NOUNS,
    GERUNDS,
    HAVE,
    IMPERATIVES,
    MASS_NOUNS,
    MODALS,
    NOT_ADJECTIVES,
    NOUNISH,
    PARTICLES,
    PATIENT_WORDS,
    PRED_FOLLOW,
    PREDICATE_WORDS,
    PREPOSITIONS,
    PRONOUNS,
    TREATMENT_ACTION,
    VAGUE_NOUNS,
    is_adverb,
    join,
    key,
    lemma_of,
    looks_adjectival,
    lower_first,
    past_tense,
    third_person,
)

_AUX_WORDS = r"(?P<aux>is|are|was|were|does|do|did|can|could|should|has|have|will|would|may|might|must)"
_ASK_PLAIN = re.compile(rf"^{_AUX_WORDS}\s+(?P<rest>.+)$", re.IGNORECASE)
_ASK = re.compile(rf"^(?P<context>.*?[:,;.]\s+){_AUX_WORDS}\s+(?P<rest>.+)$", re.IGNORECASE)
"""A question after a title or a leading phrase: "Double reading of barium enemas: is it necessary?"."""
_META_TITLE = re.compile(
    r"(?:the\s+)?(?:[\w-]+\s+)?(?:analysis|study|studies|significance|epidemiology|characteristics|features|"
    r"pattern|patterns|prognosis|utility|usefulness|value|role|accuracy|reliability|validity)\s+of\b",
    re.IGNORECASE,
)
"""Titles about something ("Analysis of X: is it ...?") whose "it" means X, not the title."""
_DUMMY_IT = re.compile(r"^\S+\s+(?:to|that|whether)\b", re.IGNORECASE)


def _any_to_article(tokens: list[str], plural: bool) -> list[str]:
    """ "there is any role" -> "there is a role": "any" reads wrong in a statement."""
    if not tokens or key(tokens[0]) != "any":
        return tokens
    nxt = key(tokens[1]) if len(tokens) > 1 else ""
    if plural or nxt in MASS_NOUNS or (nxt.endswith("s") and not nxt.endswith("ss")):
        return tokens[1:]
    return ["an" if nxt[:1] in "aeiou" else "a", *tokens[1:]]


def _predicate_start(keys: list[str], raw: list[str]) -> int | None:
    """Where the predicate of "Is <subject> <predicate>" starts, or None when no boundary is confident.

    Boundaries: an article after a noun ("Is colistin | an antibiotic"), a predicate adjective or participle
    followed by a preposition or the end ("Is X | effective for Y", "Is X | FDA approved"), a comparative.
    A generic participle ("Is stress | induced by X associated with Y") yields to a later known predicate
    word, because reduced relative clauses inside the subject look the same.
    """
    first_generic: int | None = None
    weak: int | None = None
    content, depth, relative = False, 0, False
    for i in range(1, len(keys)):
        content = content or keys[i - 1] not in DETERMINERS
        depth += raw[i - 1].count("(") + raw[i - 1].count("[") - raw[i - 1].count(")") - raw[i - 1].count("]")
        k, prev = keys[i], keys[i - 1]
        nxt = keys[i + 1] if i + 1 < len(keys) else ""
        if not content or depth > 0 or raw[i][:1] in "([":
            continue
        if k == "as" and i + 2 < len(keys) and keys[i + 2] == "as" and i + 3 < len(keys):
            return i  # "Is X as effective as Y?"
        if k == "worth" or (k == "to" and nxt == "be"):  # "Is X worth the effort?", "Are X to be blamed?"
            return first_generic if first_generic is not None else i
        if prev in {"who", "which", "that"} and k in BE | HAVE:
            relative = True  # "Are women who are treated for X at risk?": the relative clause is no predicate
            continue
        if k in {"being", "been"} or k in BE:
            return i  # "... being used", or the question repeats its auxiliary: "Is X is caused by Y?"
        letter = raw[i] == "A" and i + 1 < len(raw) and not raw[i + 1][:1].isupper()
        if (k in {"a", "an", "the"} and not letter) or (k == "one" and nxt == "of"):  # not "type A ..."
            appositive = raw[i - 1].endswith(",")  # "Is Telomestatin, a novel statin, used to ...?"
            if prev not in PREPOSITIONS | DETERMINERS | CONJUNCTIONS | {"be", "not"} and not appositive:
                return first_generic if first_generic is not None else i
            continue
        j = i + 1 if k == "any" else i  # "Are GRBs any different than TADs?"
        while j < len(keys) - 1 and is_adverb(keys[j]):
            j += 1
        word, a = keys[j], j + 1
        while a < len(keys) - 1 and is_adverb(keys[a]):
            a += 1  # "involved only in"
        after = keys[a] if a < len(keys) else ""
        adjectival = after.endswith(("ive", "ble", "ous", "ful", "ic", "al", "ed", "ent", "ant"))
        comparative = word in COMPARATIVES and (after in PRED_FOLLOW | PREDICATE_WORDS or adjectival)
        explicit = word in PREDICATE_WORDS and after in PRED_FOLLOW
        participle = (word.endswith("ed") and len(word) > 4 and word not in ED_NOUNS) or (
            lemma_of(word) or ("", "")
        )[1] == "past"
        generic = (after in PRED_FOLLOW - {"and", "or"} or after in COMPARATIVES) and (
            participle or (word.endswith(("ive", "ble", "ous", "ful")) and word not in NOT_ADJECTIVES)
        )
        if word.endswith("ing") and len(word) > 5 and not generic and word not in GERUNDS:
            if after in DETERMINERS - {"no"}:  # "Are we measuring the same thing?"
                generic = True
            elif after in PRED_FOLLOW - {"of", "and", "or"} and weak is None:
                weak = i  # only when nothing better follows: "Is coeliac disease screening in X justified?"
        generic = generic or (  # a predicate adjective ending the question: "Is MCL-1 anti-apoptotic?"
            after == ""
            and word.islower()
            and keys[j - 1] not in PREPOSITIONS | DETERMINERS
            and (word.startswith(("anti-", "non-", "pro-")) or word.endswith(ADJECTIVE_ENDINGS))
            and not word.endswith("ment")
            and word not in FINAL_NOUNS
        )
        if after in {"and", "or"} and a + 1 < len(keys):  # "Is X reproducible and applicable in Y?"
            also = keys[a + 1]
            generic = generic or (
                (participle or word.endswith(("ive", "ble", "ous", "ful")) or word in PREDICATE_WORDS)
                and (also in PREDICATE_WORDS or also.endswith(("ive", "ble", "ous", "ful", "ed")))
            )
        if relative and (comparative or explicit or generic):
            relative = False
            continue
        if comparative or explicit:
            start = i
            if start >= 2 and raw[start - 1] in {"FDA", "EMA", "CE"}:
                start -= 1  # "Is FTY720 FDA approved?"
            return first_generic if first_generic is not None and not explicit else start
        if generic and first_generic is None:
            first_generic = i - 1 if i >= 2 and raw[i - 1] in {"FDA", "EMA"} else i
    return first_generic if first_generic is not None else weak


def _verb_start(keys: list[str], raw: list[str], aux: str) -> int | None:
    """Where the verb after "Does/Can/Has <subject>" starts (an adverb before it belongs to the predicate)."""
    content = False
    for i in range(1, len(keys)):
        k, prev = keys[i], keys[i - 1]
        nxt = keys[i + 1] if i + 1 < len(keys) else ""
        content = content or prev not in DETERMINERS
        if not content or prev in DETERMINERS | PREPOSITIONS | {"to"}:
            continue
        if looks_adjectival(prev, raw[i - 1]) and aux in DO | MODALS:
            continue  # "functional benefit", "clinical use": a noun after an adjective, not the verb
        if is_adverb(k):  # "Can X accurately and reliably assess Y?" -> the adverbs go with the verb
            j = i + 1
            while j < len(keys) - 1 and (is_adverb(keys[j]) or keys[j] in {"and", "or"}):
                j += 1
            if j < len(keys) and (lemma_of(keys[j]) or keys[j] == "be"):
                return i
        if prev in CONJUNCTIONS:
            continue  # a subject does not end with "and": "the new 'test and treat' policy"
        if aux in HAVE:
            if k in {"been", "any", "a", "an", "the", "no"} or (lemma_of(k) or ("", ""))[1] == "past":
                return i
            continue
        if aux in MODALS and k == "be":
            return i
        found = lemma_of(k)
        is_verb = found is not None and (found[1] == "base" or (aux == "does" and found[1] == "3sg"))
        function_word = k in PREPOSITIONS | DETERMINERS | PRONOUNS | CONJUNCTIONS
        unknown = found is None and not function_word and raw[i].islower() and k.isalpha()
        if unknown and nxt in DETERMINERS | {""}:
            # outside the lexicon: a word right before "the/a/its ..." (or ending a "-ize" question) is a verb
            suffix_ok = not k.endswith(("ing", "ed", "s", "tion", "ment", "ity", "ly", "al"))
            is_verb = suffix_ok and (nxt != "" or k.endswith(("ize", "ise", "ify")))
        if not is_verb:
            continue
        later = lemma_of(nxt)
        after = keys[i + 2] if i + 2 < len(keys) else ""
        if later is not None and later[1] == "base" and after not in PREPOSITIONS | {""} and k in NOUNISH:
            continue  # "Does drug use increase risk?": "use" is a noun here, "increase" the verb
        return i
    return None


def statement_from_question(question: str) -> str | None:
    """The declarative claim a yes/no question asks about, or None when the subject boundary is unsure.

    "Is baloxavir effective for influenza?" -> "Baloxavir is effective for influenza"; "Does metformin reduce
    mortality in ...?" -> "Metformin reduces mortality in ...". A title before a colon is kept as context
    ("Double balloon enteroscopy: is it efficacious ...?" -> "Double balloon enteroscopy is efficacious ...").
    """
    if len(question) > 2_000:
        return None  # no benchmark question is that long; keeps the regular expressions below cheap
    text = re.sub(r"\s+", " ", question).strip().rstrip("?. ").strip()
    text = re.sub(r"\s*--\s*|\s+[-–—]\s+|\s+:\s+", ": ", text, count=1)  # "Title--can we ...?"
    told = re.match(r"(.+?),?\s+(?:yes\s+or\s+no|true\s+or\s+false)$", text, re.IGNORECASE)
    if told:  # "Thymoquinone is ineffective against X, yes or no?" states its claim (or asks it again)
        inner = told.group(1).strip()
        return statement_from_question(inner) if _ASK_PLAIN.match(inner) else inner
    if re.search(r"\b(?:same\s+or\s+different|better\s+or\s+worse|friend\s+or\s+foe)$", text, re.IGNORECASE):
        return None  # a choice, not a yes/no question
    text = re.sub(r",?\s+or\s+not$", "", text)
    match = _ASK_PLAIN.match(text) or _ASK.match(text)
    if match is None:
        title, colon, fragment = re.sub(r"[;.] ", ": ", text, count=1).partition(": ")
        opening = [key(w) for w in fragment.split()[:4]]
        if colon and opening[:1] in (["a"], ["an"], ["the"], ["one"]) and not set(opening) & VAGUE_NOUNS:
            head = re.split(r"\s(?:in|of|among|with|for|after|during|from|on|at|by)\s", title, maxsplit=1)[0]
            last = key(head.split()[-1])
            gerund = key(head.split()[0]).endswith("ing")  # "Assessing X by Y: a new approach?" is singular
            plural = last.endswith("s") and not last.endswith(("ss", "us", "is")) and not gerund
            verb = "are" if plural else "is"
            return f"{title} {verb} {fragment}"  # "Orthostatic myoclonus: an underrecognized cause of ...?"
        return None
    context = match.groupdict().get("context") or ""
    aux, rest = match.group("aux").lower(), match.group("rest")
    if re.match(r"(?:what|which|how|why|when|where|who)\b", context, re.IGNORECASE):
        return None
    tokens = rest.split()
    keys = [key(t) for t in tokens]
    title = context.rstrip(":;., ") if context.rstrip()[-1:] in {":", ";", "."} else ""
    if keys[0] == "there":
        body = f"there {aux} {join(_any_to_article(tokens[1:], aux in {'are', 'were'}))}"
    elif keys[0] in {"it", "they"} and title and len(tokens) > 1:
        if (keys[0] == "it" and _DUMMY_IT.match(" ".join(tokens[1:]))) or _META_TITLE.match(title):
            return None  # "Title: is it possible to ...?", "Analysis of X: is it ...?": "it" is not the title
        body, title, context = _declare(title.split(), aux, tokens[1:], keys[1:]), "", ""
    else:
        start = _predicate_start(keys, tokens) if aux in BE else _verb_start(keys, tokens, aux)
        if start is None:
            return None
        subject = tokens[:start]
        if context and not title:
            lower_first(subject)
        body = _declare(subject, aux, tokens[start:], keys[start:])
    if title:
        return f"{title}: {_capitalise(body)}"
    if context:
        return f"{context}{body}"
    return _capitalise(body)


def _capitalise(sentence: str) -> str:
    """Capitalise a plain first word ("baloxavir" -> "Baloxavir"), not a symbol ("miR-122", "αCGRP")."""
    first = sentence.split(" ", 1)[0]
    return sentence[:1].upper() + sentence[1:] if re.fullmatch(r"[a-z][a-z'-]*", first) else sentence


def _declare(subject: list[str], aux: str, predicate: list[str], pred_keys: list[str]) -> str:
    """Subject + re-inflected verb + predicate ("Does X reduce Y" -> "X reduces Y")."""
    if aux in DO:
        v = 0
        while v < len(pred_keys) - 1 and is_adverb(pred_keys[v]):
            v += 1  # "Does X still matter?" -> "X still matters"
        found = lemma_of(pred_keys[v])
        lemma = found[0] if found else pred_keys[v]
        if found is None and aux == "does" and lemma.endswith("s"):
            word = lemma  # already inflected: "Does X homodimerizes?" (a typo in the question)
        else:
            word = third_person(lemma) if aux == "does" else past_tense(lemma) if aux == "did" else lemma
        rest = _any_to_article(predicate[v + 1 :], False)
        for n in range(1, len(rest)):  # "Does X shorten A and reduce B?" -> "X shortens A and reduces B"
            also = lemma_of(key(rest[n]))
            coordinated = key(rest[n - 1]) in {"and", "or"} and rest[n].islower()
            if coordinated and also is not None and also[1] == "base" and aux != "do":
                rest[n] = third_person(also[0]) if aux == "does" else past_tense(also[0])
        words = [*predicate[:v], word, *rest]
    elif aux in HAVE and pred_keys and pred_keys[0] in {"any", "a", "an", "the", "no"}:
        words = [aux, *_any_to_article(predicate, aux == "have")]
    elif pred_keys and pred_keys[0] in BE:
        words = predicate  # "Is X is caused by Y?" (a typo in the question)
    elif pred_keys[:1] == ["any"] and len(pred_keys) > 1:
        words = [aux, *predicate[1:]]  # "Are X any different than Y?" -> "X are different than Y"
    else:
        words = [aux, *predicate]
    return join([*subject, *words])


# --- the parts of a reply's sentence (graphs.text.claims) ------------------------------------------------


def part_kind(part: str) -> str:
    """ "action" (an instruction or action about the patient), "patient" (a statement about this patient),
    "fact" (a general statement) or "fragment" (no clause)."""
    raw = part[strip_discourse(part) :].split()
    keys = [key(t) for t in raw]
    if not keys:
        return "fragment"
    verb = main_verb(keys, raw)
    imperative = keys[0] in IMPERATIVES and (verb is None or verb.index == 0)
    if imperative or keys[0] in ACTION_OPENERS or keys[:2] in (["no", "need"], ["need", "to"]):
        return "action"
    if verb is None or not has_subject(keys, verb):
        return "fragment"
    if verb.lemma in ACTION_LEMMAS:
        return "action"  # "the traveller needs isolation", "my registrar wants a CT"
    return "patient" if set(keys) & PATIENT_WORDS else "fact"


def action_object(action: str) -> str | None:
    """What an action is about ("cut out the spicy food" -> "the spicy food"), for a later "it"/"that"."""
    raw = action.split()
    keys = [key(t) for t in raw]

    def verb_like(k: str) -> bool:
        stem = k[:-3] if k.endswith("ing") else k
        return lemma_of(k) is not None or (k != stem and (lemma_of(stem) or lemma_of(stem + "e")) is not None)

    verbs = [i for i, k in enumerate(keys) if verb_like(k) or (i == 0 and k in IMPERATIVES | ACTION_OPENERS)]
    if not verbs:
        return None
    words: list[str] = []
    for token, k in zip(raw[verbs[-1] + 1 :], keys[verbs[-1] + 1 :], strict=True):
        if not words and k in PARTICLES | {"him", "her", "them", "sure"}:
            continue
        if k in PREPOSITIONS - {"of"} or k in {"now", "today", "to"}:
            break
        words.append(token)
    return join(words) or None


def claim_source(text: str, advice: bool) -> str:
    """The text a claim's question is made from: "started her on X for Y" -> "X is used for Y"; "(advised)
    she go gluten-free" -> "she should go gluten-free"."""
    treatment = TREATMENT_ACTION.fullmatch(text.rstrip(".!;, "))
    if treatment:
        return f"{treatment.group('what')} is used {treatment.group('how')} {treatment.group('target')}"
    tokens = text.split()
    for i in range(1, min(4, len(tokens))) if advice else ():
        found = lemma_of(key(tokens[i]))
        if found and found[1] == "base" and key(tokens[i - 1]) not in PREPOSITIONS | {"to"}:
            return " ".join([*tokens[:i], "should", *tokens[i:]])
    return text
