"""Candidate terms for the embedding linker: the n-grams of a text that the dictionary left uncovered.

Why a module of its own: which words can start or end a term (stop words, case-vignette filler, NegEx
trigger words, ages) and which terms are worth an encoder call (:func:`resembles_dictionary`) are
decisions about text, separate from how ``ner_link`` links and merges what it finds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphs.kb import KnowledgeBase
from graphs.text.negation import POST_TRIGGERS, PRE_TRIGGERS
from graphs.text.ner import DEFAULT_STOPLIST, normalise_term
from tools.ranking import STOP_WORDS, word_set

MAX_NGRAM_WORDS = 4
VOCABULARY_PREFIX = 5
"""A candidate n-gram is embedded only if each of its words starts like some word of the dictionary (first
5 letters). Why: embedding is most of this tool's time, and a term of words no entity name resembles cannot
reach δ. Measured over 322 real questions (150 BioASQ, 100 MedQA, 72 MedQuAD consumer) on the default KB:
the filter keeps 2,710 of 4,719 candidate terms (57 %) and 87 of the 91 links above δ; the four lost were
"Bcl-2-like protein", "written advanced directive", "obstipation" and "Laboratory testing reveals".
Prefixes of 4 / 6 letters kept 72 % / 49 % of the terms and 90 / 86 links."""

FILLER_WORDS: frozenset[str] = word_set(
    """
    patient patients year years old month months week weeks day days hour hours woman women man men male
    female boy girl child infant adult adults presents presented presenting present history complains
    complaining reports reported describes doctor physician clinic hospital admitted visit today recently
    currently taking takes take treated treatment treatments therapy therapies symptom symptoms sign signs
    cause causes caused diagnosis diagnose diagnosed test tests prognosis outlook prevention prevent risk
    risks option options best first line recommended recommend management manage managed approach next step
    likely most common usually often best possible effect effects information know known people many much
    question answer please help thank thanks tell explain describe mean means called type kind include
    includes including following due associated related regarding concerning consider considered suggest
    suggests suggested suggesting possibly probably rule run runs one two three four five six seven eight
    nine ten
    """
) | frozenset(word for phrase in PRE_TRIGGERS + POST_TRIGGERS for word in phrase)
"""Question and case-vignette filler that is never an entity to link ("a 45-year-old woman presents with
…", "what is the best treatment for …"); label words are here too because the question's *label* is read
by graphs.model.labels, not linked as an entity. The words of the NegEx triggers ("denies", "absent",
"ruled out") are breaks too: negation is a flag on mentions, never part of a term."""

GENERIC_TERMS: frozenset[str] = frozenset(
    normalise_term(word)
    for word in word_set(
        """
    disease diseases disorder disorders syndrome syndromes condition conditions illness illnesses sickness
    drug drugs medicine medicines medication medications gene genes protein proteins patient patients
    treatment treatments therapy therapies symptom symptoms sign signs cell cells infection infections
    bacteria bacterium virus viruses pathogen pathogens mutation mutations
    """
    )
)
"""Category words that name a *kind* of thing, never a thing: the KG has nodes with these names (Disease
Ontology's root ``DOID:4 disease``, ``DOID:225 syndrome`` with 1,052 edges, LabeledIn's "disease"
indications), and a question's "Which disease is caused by …" linked to them made "disease" the question's
subject and printed facts such as "Drugs the KG lists for disease: Quetiapine". ner_link never links them
(it reports them as ``generic_terms``); a multi-word name that contains one ("CFTR gene", "Fabry disease")
is a thing and links as before."""


def is_generic(term: str) -> bool:
    """Whether ``term`` is only a category word (see :data:`GENERIC_TERMS`)."""
    return normalise_term(term) in GENERIC_TERMS


_TOKEN = re.compile(r"[A-Za-z0-9][\w'’\-/]*[A-Za-z0-9]|[A-Za-z0-9]")
_AGE = re.compile(r"^\d+[-\s]?(year|month|week|day|hour)s?[-\s]?old$", re.IGNORECASE)


@dataclass
class CandidateTerm:
    """A term to link by embedding, with every place it occurs (text index, start, end, surface, run).

    ``origin`` is set for LLM/extra terms ("llm_terms"/"extra_terms"): they have no place until linked."""

    term: str
    places: list[tuple[int, int, int, str, int]] = field(default_factory=list)
    origin: str | None = None


def _is_break_word(word: str) -> bool:
    low = word.lower().replace("’", "'")
    return (
        low in STOP_WORDS or low in FILLER_WORDS or sum(c.isalpha() for c in low) < 2 or bool(_AGE.match(low))
    )


def candidate_terms(
    texts: list[str], covered: list[list[tuple[int, int]]]
) -> tuple[list[CandidateTerm], list[str]]:
    """1–4-word n-grams of the text the dictionary left uncovered, and the uncovered runs themselves.

    A run is a maximal stretch of content words not interrupted by punctuation, a line break, a stop or
    filler word, or a dictionary mention. Candidates are taken round-robin over runs (longest n-gram of
    each run first) so that a long hypothesis cannot crowd out the question's terms when the batch limit
    is reached.
    """
    runs: list[list[tuple[int, int, int, str]]] = []
    for index, text in enumerate(texts):
        spans = covered[index]
        current: list[tuple[int, int, int, str]] = []
        last_end = 0
        for match in _TOKEN.finditer(text):
            start, end, word = match.start(), match.end(), match.group()
            gap = text[last_end:start]
            inside_mention = any(s < end and start < e for s, e in spans)
            crosses_mention = any(last_end <= s < start for s, _ in spans)
            breaks = gap.strip() or "\n" in gap or inside_mention or crosses_mention or _is_break_word(word)
            if current and breaks:
                runs.append(current)
                current = []
            if not (inside_mention or _is_break_word(word)):
                current.append((index, start, end, word))
            last_end = end
        if current:
            runs.append(current)

    per_run: list[list[CandidateTerm]] = []
    for run_index, run in enumerate(runs):
        grams: list[CandidateTerm] = []
        for size in range(min(MAX_NGRAM_WORDS, len(run)), 0, -1):
            windows = [run[i : i + size] for i in range(len(run) - size + 1)]
            windows.sort(key=lambda w: (-(w[-1][2] - w[0][1]), w[0][1]))
            for window in windows:
                index, start, end = window[0][0], window[0][1], window[-1][2]
                surface = texts[index][start:end]
                if size == 1 and normalise_term(surface) in DICTIONARY_STOP:
                    continue
                grams.append(CandidateTerm(term=surface, places=[(index, start, end, surface, run_index)]))
        per_run.append(grams)

    merged: dict[str, CandidateTerm] = {}
    for depth in range(max((len(g) for g in per_run), default=0)):
        for grams in per_run:
            if depth < len(grams):
                candidate = grams[depth]
                key = normalise_term(candidate.term)
                if key in merged:
                    merged[key].places.extend(candidate.places)
                else:
                    merged[key] = candidate
    run_texts = [texts[run[0][0]][run[0][1] : run[-1][2]] for run in runs]
    return list(merged.values()), run_texts


def resembles_dictionary(kb: KnowledgeBase, term: str) -> bool:
    """True when every word of ``term`` begins like a dictionary word (:data:`VOCABULARY_PREFIX` letters)."""
    prefixes = kb.matcher.word_prefixes(VOCABULARY_PREFIX)
    words = normalise_term(term).split()
    return bool(words) and all(w[:VOCABULARY_PREFIX] in prefixes for w in words)


DICTIONARY_STOP = frozenset(normalise_term(w) for w in DEFAULT_STOPLIST)
"""Single words the builder's dictionary refuses to link ("rest", "cat", "impact"): the embedding linker
must not bring them back through the side door."""
