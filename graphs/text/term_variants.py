"""Surface variants of dictionary terms: plurals, singulars and possessive (eponym) forms.

Why a module of its own: these are English morphology rules with their own exceptions (irregular plurals,
invariant nouns, eponyms), tested on their own;
graphs/text/ner.py only asks for a term's extra automaton keys.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def term_variants(key: str, *, caps_only_key: bool) -> set[str]:
    """Extra automaton keys for ``key``: possessive/eponym forms, then plural or singular last words."""
    if caps_only_key:  # acronyms: only "NSAID" -> "NSAIDs"; never singularise "AIDS"
        return {key + "s"} if key[-1].isalpha() and not key.endswith("s") else set()
    forms = {key, *possessive_forms(key)}
    variants: set[str] = set()
    for form in forms:
        head, _, last = form.rpartition(" ")
        prefix = f"{head} " if head else ""
        for word in (*plural_forms(last), *singular_forms(last)):
            variants.add(prefix + word)
    return (variants | forms) - {key}


_IRREGULAR_PLURALS = {
    "foot": "feet", "tooth": "teeth", "child": "children", "man": "men", "woman": "women", "mouse": "mice",
    "louse": "lice", "ovum": "ova", "bacterium": "bacteria", "criterion": "criteria", "ganglion": "ganglia",
    "phenomenon": "phenomena", "spermatozoon": "spermatozoa", "fungus": "fungi", "nucleus": "nuclei",
    "bronchus": "bronchi", "alveolus": "alveoli", "embolus": "emboli", "thrombus": "thrombi",
    "calculus": "calculi", "bacillus": "bacilli", "stimulus": "stimuli", "focus": "foci", "calf": "calves",
    "leaf": "leaves", "life": "lives", "knife": "knives", "half": "halves", "appendix": "appendices",
    "cortex": "cortices", "varix": "varices", "matrix": "matrices", "apex": "apices", "vertex": "vertices",
}  # fmt: skip
_IRREGULAR_SINGULARS = {plural: singular for singular, plural in _IRREGULAR_PLURALS.items()}
_INVARIANT = _words(
    "diabetes measles mumps rickets herpes rabies scabies shingles hives feces faeces series species news"
    " lens pancreas ascites caries tabes striae testes genitalia biceps triceps quadriceps"
)
_EPONYM_HEADS = _words(
    "disease syndrome sign palsy anemia anaemia ulcer tumor tumour sarcoma lymphoma reflex triad gland cyst"
    " node duct fracture contracture dystrophy ataxia chorea encephalopathy neuralgia disorder"
)


def plural_forms(word: str) -> set[str]:
    """English/Latin plurals of a lower-case word ("allergy" -> "allergies", "metastasis" -> "metastases").

    Over-generation is harmless (a form nobody writes never matches); forms that are common words are
    removed by the stop list at build time.
    """
    if not word.isalpha() or len(word) < 3 or word in _INVARIANT:
        return set()
    if word in _IRREGULAR_PLURALS:
        return {_IRREGULAR_PLURALS[word]}
    if word.endswith("sis"):
        return {word[:-2] + "es"}
    if word.endswith(("ss", "us", "x", "z", "ch", "sh")):
        return {word + "es"}
    if word.endswith("s"):
        return set()
    if word.endswith("y") and word[-2] not in "aeiou":
        return {word[:-1] + "ies"}
    if word.endswith("um"):
        return {word + "s", word[:-2] + "a"}
    if word.endswith("a"):
        return {word + "s", word + "e"}
    return {word + "s"}


def singular_forms(word: str) -> set[str]:
    """Singulars of a plural-looking word ("seizures" -> "seizure", "metastases" -> "metastasis")."""
    if not word.isalpha() or len(word) < 4 or word in _INVARIANT:
        return set()
    if word in _IRREGULAR_SINGULARS:
        return {_IRREGULAR_SINGULARS[word]}
    if word.endswith("ies"):
        return {word[:-3] + "y"}
    if word.endswith("ses"):
        return {word[:-1], word[:-2], word[:-2] + "is"}  # diseases, viruses/abscesses, metastases
    if word.endswith(("xes", "ches", "shes", "zes")):
        return {word[:-2], word[:-1]}
    if word.endswith("ae"):
        return {word[:-1]}
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return {word[:-1]}
    return set()


def possessive_forms(key: str) -> set[str]:
    """Eponym spellings: "alzheimer's disease" <-> "alzheimer disease", "down syndrome" -> "down's ..."."""
    forms = set()
    if "'s " in key or key.endswith("'s"):
        forms.add(re.sub(r"'s\b", "", key))
    words = key.split(" ")
    for position, word in enumerate(words[1:], start=1):
        previous = words[position - 1]
        if word in _EPONYM_HEADS and previous.isalpha() and len(previous) >= 3:
            forms.add(" ".join([*words[: position - 1], previous + "'s", *words[position:]]))
            break
    return forms


_IRREGULAR_CONDITION_NOUNS = {
    "epileptic": ("epilepsy",), "septic": ("sepsis",), "obese": ("obesity",), "celiac": ("celiac disease",),
    "coeliac": ("coeliac disease", "celiac disease"), "diabetic": ("diabetes", "diabetes mellitus"),
}  # fmt: skip
_ADJECTIVE_ENDINGS = (
    ("istic", ("ism",)),  # autistic -> autism
    ("atic", ("a",)),  # asthmatic -> asthma
    ("otic", ("osis",)),  # psychotic -> psychosis, cirrhotic -> cirrhosis, osteoporotic -> osteoporosis
    ("itic", ("itis",)),  # arthritic -> arthritis
    ("ive", ("ion",)),  # hypertensive -> hypertension
    ("ic", ("ia", "y")),  # anemic -> anemia, schizophrenic -> schizophrenia, allergic -> allergy
)
"""How a lay adjective names a condition ("my mom is anemic"), tried ending by ending, longest first."""


def condition_noun_forms(word: str) -> tuple[str, ...]:
    """The nouns a lower-case adjective may stand for as a condition ("anemic" -> "anemia", "asthmatic" ->
    "asthma"); () for a word that is not such an adjective. Over-generation is harmless: a caller keeps a
    form only when it is a dictionary name of a disease (tools/ner_link.py)."""
    if len(word) < 5 or not word.isalpha():
        return ()
    if word in _IRREGULAR_CONDITION_NOUNS:
        return _IRREGULAR_CONDITION_NOUNS[word]
    for ending, nouns in _ADJECTIVE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[: -len(ending)]
            return tuple(stem + noun for noun in nouns)
    return ()
