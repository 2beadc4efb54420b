"""Does the answer name the detail the question asks for? The check after the "answered" model.

Why: "Which CFTR mutation is the most common in cystic fibrosis?" retrieves consumer pages that say a great
deal about CFTR and cystic fibrosis and never name a mutation; the reader scores "A defect in the CFTR gene
causes cystic fibrosis" high (it is on the subject) and the turn was "answered" (evals/near_miss.py: 7 of 8
"answered" near-miss questions did not name what was asked). A question that asks *which* thing wants a
name, a code or a number; when the answer as it would be shown holds none that the question does not
already give, the passages are about the subject, not the answer, and the turn is insufficient.

How: :func:`asked_detail` reads the kind asked from the words after "which"/"what" ("which drug", "what
HbA1c level", "how many repeats", "what is the recommended dose", "… for which molecule");
:func:`names_in` looks in sentences for a candidate of that kind (agent/nodes/detail_check.py applies it to
the direct answer: its named answer, KG facts and key sentences), and :func:`detail_lead` lets the key
sentences lead with the one that names it:

* a **code** (mutation, allele, variant, HLA type …): a token mixing letters and digits ("C282Y", "DQ2");
* a **quantity** (level, dose, threshold, how many …): a number with a unit, a percentage or a count of
  people ("6.5 %", "40 repeats", "30,000 people"), not a duration ("over the past 3 months");
* a **duration** ("how long …?"): a length of time ("3 to 5 weeks", "for years"), not an age;
* a **typed name** (drug, gene, disease …: the kinds of :data:`agent.nodes.answer_candidates.WANTED_TYPES`
  among the four words after "which"; a drug class such as "which bisphosphonate"): a KG mention of that
  type that is not the question's own subject, a code, or an all-capital or inner-capital name ("ActRII");
* an **expansion** ("What does RUNX2 stand for?"): a long form a sentence gives for the abbreviation
  ("Runt related factor-2 (Runx2)"; graphs/text/abbreviations.py), never a sentence that only uses it;
* any **other** kind ("which trial", "which dataset"): the same, with a KG drug, gene, disease or pathogen
  or a capitalised word inside a sentence ("SPRINT", "Remudy") also counting as a name.

"What class of drugs …" asks for a category in words and is not checked. Everything counted must be absent
from the question (and not an acronym of its words).

Why a check and not a feature of the model: fitted as a feature (whether the reader's three best sentences
name such a thing) on the labelled sets of evals/answered_calibration.py, it got a weight of −0.86 per
standard deviation and still left 3 of the 24 hand-written near-misses "answered" at p ≥ 0.9. As a check
after the model it stops 2 calibration and 4 held-out "answered" of about 120 each. 3 of the held-out 4
were labelled answerable: two of them show no answer ("How many genes in S. cerevisiae … whole genome
duplication?" with a gold-snippet sentence but no number; "Which labs should we use to screen diabetic
patients for kidney disease?" with "… sends it to a lab for analysis"); one names it in a word neither the
KG nor the name patterns know ("oxytocin" for "Isotocin is an homolog of what hormone?"). Counts per half:
evals/reports/answered_calibration.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.nodes.answer_candidates import (
    MIN_SURFACE,
    WANTED_TYPES,
    YES_NO,
    abbreviates_question,
    asks_for_a_name,
    in_question,
    restates_question,
)
from graphs.kb import KnowledgeBase
from graphs.model.labels import asks_for_a_differential
from graphs.text.abbreviations import asked_expansion, definitions
from graphs.text.drug_names import DRUG_TYPES
from graphs.text.ner import normalise_term
from tools.candidate_terms import is_generic

NOT_A_KIND = frozenset(
    {
        *("is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "would", "will", "may"),
        *("has", "have", "had", "causes", "cause", "happens", "happened", "to", "if", "about", "else"),
        *("i", "you", "we", "they", "it", "he", "she", "of", "in", "on", "for", "with", "the", "a", "an"),
    }
)
"""Words after "what"/"which" that start a clause, not a kind ("What is …", "What causes …")."""
CODE_KINDS = re.compile(
    r"\b(mutations?|variants?|alleles?|substitutions?|polymorphisms?|snps?|genotypes?|haplotypes?|"
    r"hla(?: types?)?|serotypes?|subtypes?|isoforms?|codons?|exons?|chromosomes?|loci|locus)\b",
    re.IGNORECASE,
)
MUTATION_KINDS = re.compile(r"\b(mutations?|variants?|substitutions?|polymorphisms?|snps?)\b", re.IGNORECASE)
"""Code kinds a gene's own symbol does not answer (an allele, an HLA type, a locus may be written as one)."""
GENE_TYPES = frozenset({"Gene", "Protein"})
QUANTITY_KINDS = re.compile(
    r"\b(levels?|thresholds?|cut-?offs?|values?|doses?|dosages?|concentrations?|percentages?|proportions?|"
    r"targets?|amounts?|numbers?|ranges?|rates?|ratios?|frequency|prevalence|incidence)\b",
    re.IGNORECASE,
)
DRUG_KINDS = re.compile(
    r"\b(bisphosphonates?|chelators?|antibiotics?|antivirals?|antifungals?|vaccines?|statins?|blockers?|"
    r"agonists?|antagonists?|anticoagulants?|steroids?|analgesics?|antidepressants?|biologics?|"
    r"therapy|therapies|treatments?|regimens?)\b",
    re.IGNORECASE,
)
"""Drug classes: what answers "which bisphosphonate …" is a drug, though the KG has no class node."""
HARM_KINDS = re.compile(r"\b(side[- ]effects?|adverse (?:effects?|reactions?|events?))\b", re.IGNORECASE)
HARM_TYPES = frozenset({"Symptom", "Phenotype", "Finding", "SideEffect", "Disease"})
GRAVE_OUTCOME = re.compile(r"\b(deaths?|died|fatal(?:ities)?|mortality)\b", re.IGNORECASE)
"""A harm the KG has no node for: "Cases of sudden and unexpected death have been reported in association
with haloperidol" names one."""
""""What are the side effects of statins?" asks for named harms: it was "answered" with "Some statins also
interact adversely with other drugs." and "You may have fewer side effects with one statin drug than
another.", which name none."""
NAMED_THING_TYPES = frozenset({"Compound", "Drug", "Gene", "Protein", "Disease", "Pathogen"})
"""For a kind the KG has no type for ("which trial"), KG mentions of these types count as names; a body
part or a symptom in a consumer page ("broken bone", "femur") does not name a trial or a drug."""
WHICH_KIND = re.compile(r"^\s*(?:which|what)\s+([\w'-]+(?:\s+[\w'-]+){0,3})", re.IGNORECASE)
NAME_OF = re.compile(r"^\s*what\s+(?:is|are)\s+the\s+names?\s+of\b", re.IGNORECASE)
WHAT_IS_THE = re.compile(r"^\s*what\s+(?:is|are|was|were)\s+the\s+((?:[\w'-]+\s*){1,5})", re.IGNORECASE)
""""What is the recommended dose of …", "What is the most common mutation …": a quantity or a code asked
in an explanation's wording (a drug or a kind there — "What are the treatments …" — is answered by text)."""
INNER_WHICH = re.compile(
    r"\b(?:in|on|to|for|from|by|through|with|of|at|into|against|between)\s+(?:which|what)\s+"
    r"([\w'-]+(?:\s+[\w'-]+){0,3})",
    re.IGNORECASE,
)
""""Fingolimod is an antagonist for which molecule?", "In which cells …": the kind after a preposition."""
HOW_MANY = re.compile(r"^\s*how\s+(?:many|much)\b", re.IGNORECASE)
WHEN_YEAR = re.compile(
    r"^\s*(?:when\s+(?:was|were|did)\b|(?:in\s+)?(?:which|what)\s+year\b)(?!.*\b(?:you|your|he|she|his|her)\b)",
    re.IGNORECASE,
)
"""A question for a year ("When did delafloxacin receive its first approval …?", "In which year was …"):
not one about the patient ("When did your symptoms start?"), and not "When is / should …", which asks for
circumstances ("When is surgery needed?")."""
YEAR = re.compile(
    r"(?<![\w.,])(?:1[89]\d\d|20\d\d)(?!\w|[.,]\d)(?!\s*(?:%|mg|patients|people|cases|children)\b)"
)
"""A year from 1800 to 2099 standing alone ("in June 2017,"), not part of a number ("2.2017", "12,017")
or a count ("2000 patients")."""
WHEN_TO_SEEK_CARE = re.compile(
    r"^\s*when\s+(?:should|do|does|must|to|is it time to)\b.{0,60}?\b(?:see|call|contact|visit|go to)\s+"
    r"(?:a|the|my|your|our)?\s*(?:doctor|physician|health care provider|gp|pediatrician|hospital|er)\b",
    re.IGNORECASE,
)
"""A question for when to seek care ("When should a child with fever see a doctor?"): its answer names the
circumstances *with* the care to seek. It was answered with "Adults can also take aspirin, but children with
fevers should not take aspirin." from the fever page."""
SEEKS_CARE = re.compile(
    r"\b(?:see|call|contact|visit|tell|talk (?:to|with)|check with|let)\s+(?:a|the|your)\s+(?:\w+\s+)?"
    r"(?:doctor|physician|health care provider|provider|pediatrician|nurse)\b|"
    r"\b(?:seek|get|need|require|call for)\s+(?:\w+\s+)?(?:medical )?(?:care|help|attention)\b|"
    r"\b(?:emergency room|emergency care|911)\b",
    re.IGNORECASE,
)
WHEN_CONDITION = re.compile(
    r"\b(?:if|when|whenever|unless|as soon as|should|must|right away|immediately)\b", re.I
)
"""A sentence that names care to seek, and when ("Call your doctor if the fever lasts more than three
days", "Let your health care provider know if you have sudden, severe headaches"): "It's a major reason
people miss days at work or school or visit the doctor." names a doctor and no circumstance."""
HOW_SPREAD = re.compile(
    r"^\s*how\s+(?:(?:is|are|was|were|does|do|did|can|could)\s+(?:\w+\s+){0,6}?"
    r"(?:transmitted|spread|passed\s+on|passed|caught|contracted|acquired|transmit|pass\s+on)\b"
    r"|(?:do|does|did|can|could)\s+(?:you|people|i|we|someone|a\s+person|children|kids|he|she|they)\s+"
    r"(?:get|catch|contract|pick\s+up)\b(?!\s+(?:rid|tested|treated|better|help|over|pregnant|diagnosed|"
    r"vaccinated|screened|checked|enough|more|less|back|out|used|started|off|through|care|medicine|"
    r"medication|relief|rest|sleep|a|an|the|my|your|their|his|her|it|them|this|that)\b))",
    re.IGNORECASE,
)
"""A question for how an illness spreads ("How is hepatitis C transmitted?", "How do people get Lyme
disease?"): its answer names a route. It was "answered" with "There is no vaccine for HCV." first, the
reader's best sentence, while "It usually spreads through contact with infected blood." sat lower."""
ROUTE = re.compile(
    r"\b(?:spread\w*|transmi\w+|pass(?:es|ed)?\s+(?:on|along|from|to|through)|"
    r"(?:get|gets|getting)(?!\s+(?:better|worse|well|rid|used|help|sick|tested|treated|checked)\b)|"
    r"catch(?:es)?|caught|contract\w*|acquir\w+|infected)\b[^.;]{0,60}?\b(?:through|by|via|from|during|when|if)\b",
    re.IGNORECASE,
)
"""A sentence naming a route ("spreads through contact with infected blood", "You could get hepatitis C
through contact with an infected person's blood", "passed from mother to baby during childbirth")."""
LIFE_EXPECTANCY = re.compile(
    r"^\s*what\s+is\s+(?:the\s+)?(?:average\s+)?(?:life expectancy|lifespan)\b", re.I
)
"""A question for how long people live with a condition ("What is the life expectancy with sickle cell
disease?"): a duration of survival. It led with "Normal red blood cells live about 90 to 120 days …"."""
LIVED = re.compile(
    r"\b(?:life expectancy|lifespan|life span|survival|surviv\w+|live (?:to|into|until|past|beyond))\b", re.I
)
"""What a sentence naming the life expectancy says beside the duration: a cell that "lives about 90 days"
is not a person's life expectancy."""
HOW_LONG = re.compile(r"^\s*how\s+long\b(?!\s+in\b)", re.IGNORECASE)
"""A question for a length of time; "How long in bp is …" asks for a length, not a duration."""
_COUNT = (
    r"(?:\d+(?:[.,]\d+)?|a few|several|a couple of|one|two|three|four|five|six|seven|eight|nine|ten|twelve)"
)
DURATION = re.compile(
    r"(?<!older than )(?<!younger than )(?<!aged )(?<!age )(?<!over )(?<!under )"
    rf"\b{_COUNT}(?:\s*(?:to|-|–|or)\s*{_COUNT})?\s+(?:more\s+)?(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
    r"(?!\s*(?:old|of age|and older|or older)\b)|\bfor (?:days|weeks|months|years|life)\b|\blife-?long\b",
    re.IGNORECASE,
)
"""A length of time ("3 to 5 weeks", "a few days", "for years", "lifelong"), not an age ("60 years old",
"older than 60 years"): what "how long …?" asks for —
"How long does shingles last?" was answered with sentences about who gets long-term pain."""
DURATION_OF: tuple[tuple[re.Pattern[str], str, re.Pattern[str]], ...] = (
    (
        re.compile(r"\b(contagious|infectious|spread\w*|transmi\w+|pass\w* (?:it|on))\b", re.I),
        "contagious period",
        re.compile(
            r"\b(contagi\w*|infectious|infective|spread\w*|transmi\w+|pass(?:es|ed)? (?:it|the \w+) on)\b",
            re.I,
        ),
    ),
    (
        re.compile(r"\b(live|lives|living|survive\w*|survival|life expectancy)\b", re.I),
        "survival time",
        re.compile(r"\b(live|lives|living|surviv\w*|life expectancy|lifespan|die|dies|death)\b", re.I),
    ),
    (
        re.compile(r"\b(immun\w*|protect\w*)\b", re.I),
        "duration of protection",
        re.compile(r"\b(immun\w*|protect\w*|booster)\b", re.I),
    ),
)
"""Durations *of a state* the question names: "How long is a person with chickenpox contagious?" was
answered with "Chickenpox is usually mild and lasts 5 to 10 days." — a length of time, but of the illness,
not of being contagious. When the question names one of these states (its cue), the sentence naming the
duration must name the state too (its stems). Other "how long" questions ("How long does shingles last?")
take any length of time."""


def duration_of(question: str) -> tuple[str, re.Pattern[str]] | None:
    """The state whose duration a "how long" question asks (its words, the sentence stems), if any."""
    for cue, words, stems in DURATION_OF:
        if cue.search(question):
            return words, stems
    return None


CODE = re.compile(r"(?<![\w*:])(?=[\w*:-]*\d)(?=[\w*:-]*[A-Za-z])[A-Za-z0-9][\w*:-]*[A-Za-z0-9](?![\w*:])")
NOT_A_CODE = re.compile(r"^\d[\d.,]*(?:[-–]?[a-z]+)+$")
"""A number with a lower-case word stuck to it ("10-year", "1990s", "2nd-line", "5mg") is not a code."""
UNIT = (
    r"(?:%|percent\b|per\s?cent\b|mg\b|g\b|µg\b|mcg\b|ng\b|mmol\b|µmol\b|micromol\b|mol\b|mmhg\b|mm\s?hg\b|"
    r"iu\b|units?\b|ml\b|dl\b|l\b|kg\b|cm\b|mm\b|bpm\b|repeats?\b|copies\b|times\b|fold\b|-fold\b|"
    r"people\b|persons?\b|individuals?\b|patients?\b|cases?\b|births?\b|adults?\b|children\b|men\b|"
    r"women\b|americans?\b|newborns?\b|deaths?\b|genes?\b|doses?\b|tablets?\b|(?:in|of)\s+(?:every\s+)?\d)"
)
QUANTITY = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)*\s?(?:million|billion|thousand|hundred)?\s?" + UNIT, re.IGNORECASE
)
"""A number with a unit, a percentage, a count of people or cases, or a ratio ("1 in 2,500"): not a bare
number, which is as often a year, an age or a footnote."""
NAME_TOKEN = re.compile(r"(?<![\w-])(?:[A-Z]{3,}|[A-Z]?[a-z]+[A-Z]\w*)(?![\w-])")
"""An all-capital word of three letters or more ("SPRINT") or a word with an inner capital ("FunImageJ",
"ActRII"): a name whatever kind was asked."""
MID_CAPITAL = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{2,}\b")
"""A capitalised word inside a sentence ("the Japanese Registry … (Remudy)"): a proper name, counted only
for a kind the KG has no type for ("which dataset", "which trial")."""
NAMED_IN_BRACKETS = re.compile(
    r"\b(?:drugs?|medicines?|medications?|vaccines?|antibiotics?|antivirals?|statins?|anticoagulants?|"
    r"blood thinners?|inhalers?|injections?|pills?)\s+\(([A-Z][a-z]{3,})\)"
)
"""A product named in brackets after its kind ("approved a vaccine (Zostavax)", "a blood thinner (Coumadin)"):
the name a "which vaccine / which drug" question asks for, though the KG does not know the brand — "Which
vaccine prevents shingles?" was left insufficient beside that sentence (answered probability 0.98)."""
CATEGORY = re.compile(r"\b(class(?:es)?|types?|kinds?|famil(?:y|ies)|groups?|categor(?:y|ies))\s+of\b", re.I)
""""What classes of drugs …": the answer is a category in words ("pleuromutilin antibiotics"), not a name."""


@dataclass(frozen=True)
class AskedDetail:
    """What a which/what question asks for: ``kind`` is code, quantity, typed or other; ``phrase`` is the
    question's own words for it ("CFTR mutation", "HbA1c level"), for the verdict's explanation."""

    kind: str
    types: frozenset[str]
    phrase: str = ""
    state: re.Pattern[str] | None = field(default=None, compare=False)
    """For a duration of a state ("contagious"): the stems a sentence naming the duration must also hold
    (:data:`DURATION_OF`)."""


def asked_detail(question: str) -> AskedDetail | None:
    """The kind of detail a question asks to be named, or ``None`` (a yes/no, an explanation, "What is …")."""
    expanded = asked_expansion(question)
    if expanded:
        return AskedDetail("expansion", frozenset(), f"expansion of {expanded}")
    many = HOW_MANY.search(question)
    if many:
        counted = phrase_up_to(" ".join(question[many.end() :].split()[:3]), 10**6)
        return AskedDetail("quantity", frozenset(), f"number of {counted}".strip())
    if WHEN_TO_SEEK_CARE.search(question):
        return AskedDetail("care", frozenset(), "when to seek care")
    if HOW_SPREAD.search(question):
        return AskedDetail("route", frozenset(), "how it spreads")
    if LIFE_EXPECTANCY.search(question):
        return AskedDetail("duration", frozenset(), "life expectancy", LIVED)
    if HOW_LONG.search(question):
        state = duration_of(question)
        return AskedDetail("duration", frozenset(), *(state or ("duration", None)))
    if WHEN_YEAR.search(question):
        return AskedDetail("year", frozenset(), "year")
    if asks_for_a_differential(question):
        return AskedDetail("condition", frozenset({"Disease"}), "condition it could be")
    if CATEGORY.search(question) or YES_NO.search(question):
        return None
    inner = INNER_WHICH.search(question)
    if not asks_for_a_name(question):
        return kind_in_words(inner.group(1)) if inner else None
    head, name_of, what_is = WHICH_KIND.match(question), NAME_OF.search(question), WHAT_IS_THE.match(question)
    if what_is and not name_of:
        kinds = (
            ("code", CODE_KINDS, NONE),
            ("quantity", QUANTITY_KINDS, NONE),
            ("typed", HARM_KINDS, HARM_TYPES),
        )
        return kind_in(what_is.group(1), kinds)
    if name_of:
        words = question[name_of.end() :]
    elif head and head.group(1).split()[0].lower() not in NOT_A_KIND:
        words = head.group(1)
    else:
        return None
    return kind_in_words(words)


LEADING_KINDS = frozenset({"duration", "code", "year", "condition", "care", "route", "expansion"})
"""Kinds a sentence is seen to name by its own words (a length of time, a mutation or allele code, a year),
so the key sentences can lead with one. Not a quantity: numbers with units are everywhere in a page about the
subject, and leading with one answered "What HbA1c level defines diabetes?" with "an A1C test result of
under 7 percent usually means that their diabetes treatment is working" (evals/near_miss.py, nm-23); nor a
typed name, which needs the KG and the reader's vote (agent/nodes/answer_candidates.py) — except the
condition a differential asks for: "My child has a barking cough and fever at night. What could it be?" led
with "There may also be a fever and high-pitched noisy sounds when breathing." from the croup page, which
never says croup."""


def detail_lead(
    kb: KnowledgeBase, question: str, question_entity_ids: set[str]
) -> Callable[[str], bool] | None:
    """Whether a sentence names the duration or code the question asks for; ``None`` when it asks neither.

    Why: "How long does shingles last?" was insufficient ("no shown sentence names the duration") while "the
    pain subsides within 3 to 5 weeks" was among the reader's sentences: the reader scores a sentence for
    being on the question, not for holding the asked length of time."""
    detail = asked_detail(question)
    if detail is None or detail.kind not in LEADING_KINDS:
        return None
    return lambda text: bool(names_in(kb, question, question_entity_ids, [text], detail))


def kind_in_words(words: str) -> AskedDetail:
    """The kind named by the words after "which" ("CFTR mutation", "molecule", "drugs")."""
    typed = tuple(("typed", pattern, types) for pattern, types in WANTED_TYPES)
    genes = tuple(kind for kind in typed if "Gene" in kind[2])  # "which gene mutation": a gene name answers
    kinds = (
        *genes,
        ("code", CODE_KINDS, NONE),
        ("quantity", QUANTITY_KINDS, NONE),
        ("typed", DRUG_KINDS, DRUG_TYPES),
    )
    other = AskedDetail("other", NAMED_THING_TYPES, " ".join(words.split()[:1]))
    return kind_in(words, kinds + typed) or other


NONE: frozenset[str] = frozenset()


def kind_in(words: str, kinds: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]) -> AskedDetail | None:
    """The first of ``kinds`` whose pattern the asked words contain, phrased up to its last mention."""
    for kind, pattern, types in kinds:
        found = list(pattern.finditer(words))
        if found:
            return AskedDetail(kind, types, phrase_up_to(words, found[-1].end()))
    return None


def phrase_up_to(words: str, end: int) -> str:
    """The asked words up to the kind word, without clause words ("CFTR mutation", "number of people")."""
    kept: list[str] = []
    for word in words[:end].split():
        if word.lower() in NOT_A_KIND and kept:
            break
        kept.append(word)
    while kept and kept[-1].lower() in NOT_A_KIND:
        kept.pop()
    return " ".join(kept[-4:])


def names_in(
    kb: KnowledgeBase,
    question: str,
    question_entity_ids: set[str],
    texts: list[str],
    detail: AskedDetail | None = None,
) -> bool | None:
    """Whether ``texts`` name a candidate of the asked kind that the question does not hold."""
    detail = detail or asked_detail(question)
    if detail is None:
        return None
    asked = normalise_term(question)
    if detail.kind == "expansion":  # "Runt related factor-2 (Runx2)" for "What does RUNX2 stand for?"
        short = asked_expansion(question)
        return short is not None and any(definitions(short, t) for t in texts)
    if detail.kind == "duration":
        return any(
            normalise_term(d) not in asked and (detail.state is None or detail.state.search(t) is not None)
            for t in texts
            for d in DURATION.findall(t)
        )
    if detail.kind == "care":
        return any(SEEKS_CARE.search(t) and WHEN_CONDITION.search(t) for t in texts)
    if detail.kind == "route":
        return any(ROUTE.search(t) for t in texts)
    if detail.kind == "year":
        return any(y not in asked for t in texts for y in YEAR.findall(t))
    if detail.kind == "condition":  # a KG disease the question does not name; "ECG", "MRI" are not one
        return bool(kg_candidates(kb, asked, question_entity_ids, texts, detail.types))
    if detail.types == HARM_TYPES and any(GRAVE_OUTCOME.search(t) for t in texts):
        return True
    if detail.kind == "quantity":
        return any(q for t in texts for q in QUANTITY.findall(t) if normalise_term(q) not in asked)
    codes = [c for t in texts for c in CODE.findall(t) if not NOT_A_CODE.match(c)]
    if detail.kind == "code" and MUTATION_KINDS.search(detail.phrase):
        codes = [c for c in codes if not is_gene_symbol(kb, c)]
    if any(not_in_question(code, asked) for code in codes):
        return True
    if detail.kind == "code":
        return False
    names = [n for t in texts for n in NAME_TOKEN.findall(t)]
    if detail.types & DRUG_TYPES:
        names += [n for t in texts for n in NAMED_IN_BRACKETS.findall(t)]
    if detail.kind == "other":
        names += [n for t in texts for n in MID_CAPITAL.findall(t)]
    if any(not_in_question(n, asked) and not abbreviates_question(n, asked) for n in names):
        return True
    return bool(kg_candidates(kb, asked, question_entity_ids, texts, detail.types))


def is_gene_symbol(kb: KnowledgeBase, token: str) -> bool:
    """Whether the KG knows ``token`` as a gene or protein ("FGFR3"): a gene's symbol is not a mutation of
    it, and "… mutations … of the FGFR3 protein account for all cases" does not answer "Which de novo
    mutation in FGFR causes achondroplasia?" (G380R does)."""
    ids = kb.matcher.entity_ids(token)
    return bool(ids) and any(e.type in GENE_TYPES for e in kb.store.get_entities(ids).values())


def not_in_question(surface: str, asked: str) -> bool:
    key = normalise_term(surface)
    return bool(key) and not in_question(key, asked)


def kg_candidates(
    kb: KnowledgeBase, asked: str, question_entity_ids: set[str], texts: list[str], types: frozenset[str]
) -> list[str]:
    """KG mentions of ``types`` in ``texts`` that the question does not give, under any of their names."""
    mentions = [m for ms in kb.matcher.find_many(texts) for m in ms]
    keep = [
        m
        for m in mentions
        if len(normalise_term(m.surface)) >= MIN_SURFACE
        and not is_generic(m.surface)
        and not question_entity_ids.intersection(m.entity_ids)
        and not_in_question(m.surface, asked)
        and not abbreviates_question(m.surface, asked)
    ]
    if not keep:
        return []
    entities = kb.store.get_entities(sorted({i for m in keep for i in m.entity_ids}))
    return [
        m.surface
        for m in keep
        if not restates_question(list(m.entity_ids), entities, asked)
        and any(entities[i].type in types for i in m.entity_ids if i in entities)
    ]
