"""Dictionary NER: which dictionary entities does a text mention, and exactly where.

Why a dictionary matcher: the knowledge-base builder needs ``f(e)``, the normalised entities of every
evidence passage (~40k passages, ~100k terms), and the offline ``ner_link`` tool needs the entities of a
question; no biomedical NER model ships offline (scispaCy and QuickUMLS do not), and a dictionary over the
knowledge graph's own names links straight to its node ids.

Design, and why:

* **One Aho-Corasick pass** (pyahocorasick, in C) over a normalised copy of the text finds every dictionary
  key; Python only filters the candidates (word boundaries, case) and resolves overlaps.
* **Normalisation keeps offsets.** Lower-casing, accent folding (``ö`` -> ``o``), hyphens and every kind
  of whitespace -> a space are one character for one character, so normalised positions equal original
  positions; only runs of spaces, combining marks and invisible characters are deleted, and those few
  deletions are recorded as segments that map any normalised offset back exactly. A character whose lower
  case is longer (``İ`` -> ``i̇``) keeps its first character only. A dash next to a space is a list
  separator or bullet ("Sores - Pain" in MedQuAD), not a hyphen: it stays a barrier no term crosses.
* **Plurals are expanded at build time**, not singularised at lookup: adding "seizures", "allergies",
  "metastases" as extra automaton keys that point to the canonical key costs memory once, keeps the single C
  pass, and never rewrites text ("diabetes" is looked up as written, so it cannot become "diabete").
  Plural dictionary names ("Seizures") also get their singular. A variant never displaces a real key.
* **Word boundaries:** a match must not start or end inside a word ("ALS" in "signals", "pain" in
  "painful"), so derived words are deliberately not matched; plural endings are keys, not suffixes.
* **Case:** the dictionary is case-insensitive, except that a spelling written ALL-CAPS in the dictionary
  (gene symbols, acronyms: "CAT", "REST", "AIDS") only links where the text is all-caps as well; short
  terms (``< min_term_chars``) are kept only in that case-sensitive form. A stop list of common English
  words and medical false friends removes names that are ambiguous even in capitals.
* **Overlaps:** the longest match wins ("type 2 diabetes mellitus" over "diabetes mellitus"); equal
  lengths go to the earliest start, so results are deterministic.
"""

from __future__ import annotations

import bisect
import os
import pickle
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import ahocorasick
from pydantic import BaseModel, ConfigDict

from graphs.text.negation import negated_spans
from graphs.text.term_variants import term_variants

FORMAT_VERSION = 1
"""Version of the saved matcher file; bumped when the pickled payload changes shape."""
_FORMAT_NAME = "evigraph-dictionary-matcher"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DEFAULT_STOPLIST: frozenset[str] = _words(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its just me more most my no nor not now of off
    on once only or other our out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your
    able across act age ago air along already always among another area around art ask away back bad base
    became become best better big bit black blue body book born bring call came care carry case cause
    center certain change child city clear close cold come common complete control cost could course
    cover cut dark data day dead deal death deep die direct door draw drive early east easy effect else
    end enough even event ever every face fact fall family far fast fat father feel field fig figure fill
    final find fine fire first fit five focus follow food force form four free friend front full fun game
    gave general get give go good got great green ground group grow half hand hard head hear heart heat
    held help high hit hold home hope hot hour house however human idea impact important inside island
    job keep key kind king know land large last late lead learn least leave left less let level life light
    like line list little live long look lost lot love low made main major make man many mark match matter
    max may mean might mind miss mode model moment money month move much must name near need never new
    next night note number object off offer old once open order page part pass past pay people per period
    person pick place plan plant play point poor port position post power present press pretty price
    problem produce program public pull put question quite race rate reach read ready real reason record
    red region rest result return right rise risk road rock role room round rule run said save saw say
    school sea second see seem seen self sell send sense serve set seven several shape share short show
    side sign simple since single six size small social soft son sound south space speak special stand
    star start state stay step still stop story street strong study such sun support sure system table
    take talk team tell ten test than thing think third three time today together told took top total
    toward town track trade tree true try turn two type unit upon use used value view voice wait walk wall
    want war watch water way week well went west white whole wide wife will wind window word work world
    year yes yet young
    ii iii iv vi vii viii ix xi xii arc cat cell impact pc set rest was can all ms on at
    extra formation internal contact enlarged painful progressive onset children humans intense swollen
    itchy burning destruction narrowing thinning fusion heterogeneous fitting falls muscular
    """
)
"""Names never matched, compared with normalised keys. Three groups: the few hundred most frequent English
words; gene symbols and abbreviations that are English words ("CAT", "WAS", "REST", "IMPACT"); and junk
names of the unified KG that the MedQuAD check in evals/bench_ner.py surfaced among the most frequent
matches ("extra" as a Pathogen, "children" as Anatomy, "formation", "enlarged", "painful", "onset", ...)."""


def _fold_table() -> dict[int, str]:
    """One-to-one character replacements: accents -> base letter, dashes/spaces -> ' ', quotes -> ASCII."""
    table: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        decomposed = unicodedata.normalize("NFKD", chr(code).lower())
        base, marks = decomposed[:1], decomposed[1:]
        if base.isascii() and base.isalpha() and marks and all(unicodedata.combining(c) for c in marks):
            table[code] = base
    table.update({ord(k): v for k, v in {"ø": "o", "đ": "d", "ł": "l", "ı": "i", "ħ": "h"}.items()})
    dashes = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
    spaces = "\t\n\r\x0b\x0c\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
        map(chr, range(0x2000, 0x200B))
    )
    table.update({ord(char): " " for char in spaces})
    table.update({ord(char): "-" for char in dashes})
    table.update({ord(c): "'" for c in "‘’ʼ′`"})
    table.update({ord(c): '"' for c in "“”″"})
    return table


_DANGLING_END = _words("the of a an and or in to with by for on at from")
_DANGLING_START = _words("the of and or to with by for other")


def _is_fragment(key: str, name: str) -> bool:
    """KG artefacts that are no concept: "inflammation of the", "other tissues", "46" (no letter). A final
    capital "A" is a letter that names a type ("hepatitis A", "Vitamin A", "Niemann-Pick disease type A"),
    not an article: those names were dropped, so "hepatitis A" linked only "hepatitis"."""
    words = key.split(" ")
    dangling = words[-1] in _DANGLING_END and not (words[-1] == "a" and _ends_in_letter_a(name))
    return dangling or words[0] in _DANGLING_START or not any(map(str.isalpha, key))


def is_fragment_name(name: str) -> bool:
    """Whether a KG node's name is an extraction artefact rather than a concept ("abnormal ossification of
    cartilage in", "inflammation of the"): never linked in text, and never shown as a KG fact."""
    return _is_fragment(normalise_term(name), name)


def _ends_in_letter_a(name: str) -> bool:
    """A name ending in a separate capital "A" ("hepatitis A"), which text must write capital too."""
    return len(name) > 2 and name.rstrip()[-2:] == " A"


_FOLD = _fold_table()
_SPACED_DASH = re.compile(r"(?<![^ ])-|-(?![^ ])")
_SEPARATOR = "\x1f"
"""Replaces a dash touching a space or the text's edge ("Sores - Pain", "\\n-Pain"): a list separator or
bullet, never a hyphen inside a name, so no term may match across it."""
_DELETED = re.compile(r"(?<= ) +|[\u0300-\u036f\u00ad\u200b-\u200d\u2060\ufeff]+")
"""Deleted from the normalised text: extra spaces of a run, combining marks, soft hyphens, zero-widths."""


class _Normalised(NamedTuple):
    """A normalised text and the segments that map its positions back to the original."""

    text: str
    norm_starts: list[int]
    orig_starts: list[int]

    def to_original(self, position: int) -> int:
        segment = bisect.bisect_right(self.norm_starts, position) - 1
        return self.orig_starts[segment] + position - self.norm_starts[segment]


def _normalise(text: str) -> _Normalised:
    lowered = text.lower()
    if len(lowered) != len(text):  # 'İ'.lower() is two characters: keep the first, per character
        lowered = "".join(c.lower()[0] for c in text)
    folded = lowered.translate(_FOLD)
    if "-" in folded:  # "type-2" -> "type 2", but a list separator " - " stays a barrier
        folded = _SPACED_DASH.sub(_SEPARATOR, folded).replace("-", " ")
    norm_starts, orig_starts, pieces = [0], [0], []
    kept_from = 0
    for deletion in _DELETED.finditer(folded):
        pieces.append(folded[kept_from : deletion.start()])
        kept_from = deletion.end()
        norm_starts.append(norm_starts[-1] + len(pieces[-1]))
        orig_starts.append(kept_from)
    if not pieces:
        return _Normalised(folded, norm_starts, orig_starts)
    pieces.append(folded[kept_from:])
    return _Normalised("".join(pieces), norm_starts, orig_starts)


def normalise_term(text: str) -> str:
    """The dictionary key of a name: lower case, accents folded, hyphens and whitespace runs -> one space."""
    return _normalise(text).text.strip()


def _is_all_caps(text: str) -> bool:
    """True for "AIDS", "IL-6", "BRCA1"; false when any letter is lower case or there is no letter."""
    return any(c.isupper() for c in text) and not any(c.islower() for c in text)


class Mention(BaseModel):
    """One dictionary entity mention; offsets index the original text (``text[start:end] == surface``)."""

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    surface: str
    term: str
    entity_ids: list[str]
    negated: bool = False


def mark_negations(text: str, mentions: list[Mention]) -> list[Mention]:
    """Copies of ``mentions`` with ``negated=True`` where a NegEx-style trigger scopes over them."""
    flags = negated_spans(text, [(m.start, m.end) for m in mentions])
    return [
        m.model_copy(update={"negated": True}) if flag else m for m, flag in zip(mentions, flags, strict=True)
    ]


class _Candidate(NamedTuple):
    norm_start: int
    norm_end: int
    start: int
    end: int
    key: int
    entity_ids: tuple[str, ...]


class DictionaryMatcher:
    """An immutable, picklable dictionary of normalised terms -> entity ids, searched in one pass."""

    def __init__(
        self,
        automaton: Any,
        keys: list[str],
        any_case: list[tuple[str, ...]],
        caps_only: list[tuple[str, ...]],
    ) -> None:
        self._automaton = automaton
        self._keys = keys
        self._any_case = any_case
        self._caps_only = caps_only
        self._word_prefixes: dict[int, frozenset[str]] = {}

    @classmethod
    def build(
        cls,
        terms: Iterable[tuple[str, str]],
        *,
        stoplist: Iterable[str] | None = None,
        min_term_chars: int = 3,
        min_acronym_chars: int = 2,
    ) -> DictionaryMatcher:
        """Build from ``(name or synonym, entity_id)`` pairs.

        ``stoplist`` (default :data:`DEFAULT_STOPLIST`) is compared with normalised keys and drops them in
        any case. Names shorter than ``min_term_chars`` are kept only if written all-caps and at least
        ``min_acronym_chars`` long, and then match all-caps text only.
        """
        stop = {normalise_term(s) for s in (DEFAULT_STOPLIST if stoplist is None else stoplist)}
        any_case: dict[str, set[str]] = {}
        caps_only: dict[str, set[str]] = {}
        for name, entity_id in terms:
            key = normalise_term(name)
            if not key or key in stop or _is_fragment(key, name):
                continue
            caps = _is_all_caps(name)
            if len(key) < min_term_chars and not (caps and len(key) >= min_acronym_chars):
                continue
            (caps_only if caps else any_case).setdefault(key, set()).add(entity_id)
        for key, ids in any_case.items():  # an entity with a mixed-case spelling matches in any case
            if key in caps_only:
                caps_only[key] -= ids
        keys = sorted(any_case.keys() | caps_only.keys())
        automaton = ahocorasick.Automaton()
        for index, key in enumerate(keys):
            automaton.add_word(key, (index, len(key)))
        for index, key in enumerate(keys):
            for variant in term_variants(key, caps_only_key=key not in any_case):
                if len(variant) >= min_term_chars and variant not in stop and variant not in automaton:
                    automaton.add_word(variant, (index, len(variant)))
        if keys:
            automaton.make_automaton()
        return cls(
            automaton,
            keys,
            [tuple(sorted(any_case.get(k, ()))) for k in keys],
            [tuple(sorted(caps_only.get(k, ()))) for k in keys],
        )

    def __len__(self) -> int:
        return len(self._keys)

    def word_prefixes(self, length: int) -> frozenset[str]:
        """The first ``length`` letters of every word of every term, built once per length (tens of ms).

        Why here: the embedding linker asks, per candidate n-gram, whether its words look like dictionary
        words at all (tools/candidate_terms.py); the answer depends on this dictionary only.
        """
        found = self._word_prefixes.get(length)
        if found is None:
            found = frozenset(word[:length] for key in self._keys for word in key.split())
            self._word_prefixes[length] = found
        return found

    def entity_ids(self, term: str) -> list[str]:
        """Entities a name maps to, or [] if it is not a key; the all-caps-only ones (acronyms) only when
        ``term`` is written in capitals, as :meth:`find` does in text.

        Why: the offline planner links a question's leftover words through here, and "eGFR" (the kidney
        function estimate) became the EGFR gene — a newcomer's metformin question was then told the KB
        "holds no research literature … about genes" and that EGFR was missing."""
        found = self._automaton.get(normalise_term(term), None) if self._keys else None
        if found is None:
            return []
        surface = term.strip()
        acronym = _is_all_caps(self._acronym_part(surface, normalise_term(surface), found[0]))
        return [*self._any_case[found[0]], *(self._caps_only[found[0]] if acronym else ())]

    def find(self, text: str, *, with_negation: bool = False) -> list[Mention]:
        """Non-overlapping mentions in ``text``, sorted by start; negation flags only if asked."""
        if not self._keys or not text:
            return []
        chosen = _longest_first(self._candidates(text))
        mentions = [  # model_construct: every field is built here, validation would only cost time
            Mention.model_construct(
                start=c.start,
                end=c.end,
                surface=text[c.start : c.end],
                term=self._keys[c.key],
                entity_ids=list(c.entity_ids),
            )
            for c in chosen
        ]
        return mark_negations(text, mentions) if with_negation else mentions

    def find_many(self, texts: Sequence[str], *, with_negation: bool = False) -> list[list[Mention]]:
        """:meth:`find` over many texts (the builder's entry point)."""
        return [self.find(text, with_negation=with_negation) for text in texts]

    def _candidates(self, text: str) -> Iterator[_Candidate]:
        normalised = _normalise(text)
        norm = normalised.text
        length = len(norm)
        for last, (key, key_length) in self._automaton.iter(norm):
            first, stop = last - key_length + 1, last + 1
            if first > 0 and norm[first].isalnum() and norm[first - 1].isalnum():
                continue
            if stop < length and norm[last].isalnum() and norm[stop].isalnum():
                continue
            start = normalised.to_original(first)
            end = normalised.to_original(last) + 1
            while end < len(text) and unicodedata.combining(text[end]):
                end += 1
            if text[end - 1] == "a" and self._keys[key].endswith(" a"):
                continue  # "hepatitis A" is a name, "… hepatitis a few weeks …" is not
            entity_ids = self._any_case[key]
            if self._caps_only[key] and _is_all_caps(
                self._acronym_part(text[start:end], norm[first:stop], key)
            ):
                entity_ids = entity_ids + self._caps_only[key]
            if entity_ids:
                yield _Candidate(first, stop, start, end, key, entity_ids)

    def _acronym_part(self, surface: str, pattern: str, key: int) -> str:
        """The part of a surface that must be all-caps: "NSAIDs" matched the plural variant "nsaids"."""
        return surface[:-1] if pattern != self._keys[key] and surface.endswith("s") else surface

    def save(self, path: Path) -> None:
        """Write atomically (temporary file in the same directory, then ``os.replace``)."""
        path = Path(path)
        payload = {
            "format": _FORMAT_NAME,
            "version": FORMAT_VERSION,
            "keys": self._keys,
            "any_case": self._any_case,
            "caps_only": self._caps_only,
            "automaton": self._automaton,
        }
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with temporary.open("wb") as handle:
                pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path) -> DictionaryMatcher:
        """Read a file written by :meth:`save` (a pickle: load only files EviGraph wrote itself).

        Raises ``ValueError`` naming the file when it is corrupt, not a matcher, or of another version.
        """
        path = Path(path)
        with path.open("rb") as handle:
            try:
                payload = pickle.load(handle)
            except Exception as error:  # unpickling garbage can raise almost anything
                raise ValueError(f"{path}: not a readable dictionary-matcher file ({error!r})") from error
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT_NAME:
            raise ValueError(f"{path}: not a dictionary-matcher file")
        if payload.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{path}: dictionary-matcher format version {payload.get('version')!r}, this code reads "
                f"version {FORMAT_VERSION}; rebuild the matcher"
            )
        try:
            return cls(payload["automaton"], payload["keys"], payload["any_case"], payload["caps_only"])
        except KeyError as error:
            raise ValueError(f"{path}: dictionary-matcher file lacks {error}") from error


def _longest_first(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """Greedy longest-first selection of non-overlapping candidates, returned in text order."""
    ordered = sorted(candidates, key=lambda c: (c.norm_start - c.norm_end, c.norm_start))
    starts: list[int] = []
    chosen: list[_Candidate] = []
    for candidate in ordered:
        slot = bisect.bisect_left(starts, candidate.norm_end)
        if slot > 0 and chosen[slot - 1].norm_end > candidate.norm_start:
            continue
        starts.insert(slot, candidate.norm_start)
        chosen.insert(slot, candidate)
    return chosen
