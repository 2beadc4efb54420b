"""Dictionary NER (graphs/text/ner.py, negation.py) on the real unified KG and small dictionaries."""

from __future__ import annotations

import csv
import gzip
import itertools
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from graphs.text.ner import (
    DEFAULT_STOPLIST,
    FORMAT_VERSION,
    DictionaryMatcher,
    Mention,
    mark_negations,
    normalise_term,
)

NODES = Path(__file__).resolve().parents[1] / "data" / "kg" / "unified" / "nodes.tsv.gz"
"""The unified KG's nodes as the project ships them (the same bytes as ../shared/data/kg/unified)."""


def _kg_terms() -> Iterator[tuple[str, str]]:
    with gzip.open(NODES, "rt", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            yield row["name"], row["node_id"]
            for synonym in row["synonyms"].split("|"):
                if synonym.strip():
                    yield synonym, row["node_id"]


@pytest.fixture(scope="module")
def kg() -> DictionaryMatcher:
    """All names and synonyms of the unified KG (31k nodes), built once for the module."""
    return DictionaryMatcher.build(_kg_terms())


def _small(*terms: tuple[str, str], stoplist: tuple[str, ...] | None = None) -> DictionaryMatcher:
    return DictionaryMatcher.build(terms, stoplist=stoplist)


def _terms(mentions: list[Mention]) -> list[str]:
    return [m.term for m in mentions]


def _assert_offsets(text: str, mentions: list[Mention]) -> None:
    for mention in mentions:
        assert text[mention.start : mention.end] == mention.surface
    assert all(a.end <= b.start for a, b in itertools.pairwise(mentions))


def test_longest_match_wins_over_nested_terms() -> None:
    matcher = _small(("type 2 diabetes mellitus", "T2DM"), ("diabetes mellitus", "DM"), ("diabetes", "D"))
    text = "Type 2 diabetes mellitus differs from diabetes mellitus and from diabetes."
    mentions = matcher.find(text)
    assert _terms(mentions) == ["type 2 diabetes mellitus", "diabetes mellitus", "diabetes"]
    assert [m.entity_ids for m in mentions] == [["T2DM"], ["DM"], ["D"]]
    _assert_offsets(text, mentions)


def test_equal_length_overlap_goes_to_the_earliest_start() -> None:
    matcher = _small(("chest pain", "CP"), ("pain score", "PS"))
    assert _terms(matcher.find("chest pain score")) == ["chest pain"]


def test_plural_forms_match_singular_terms() -> None:
    matcher = _small(
        ("seizure", "S"), ("allergy", "A"), ("metastasis", "M"), ("abscess", "AB"), ("diabetes", "D"),
        ("rash", "R"), ("vertebra", "V"), ("bacterium", "B"),
    )  # fmt: skip
    text = "Seizures, allergies, metastases, abscesses, rashes, vertebrae and bacteria; diabetes."
    mentions = matcher.find(text)
    expected = ["seizure", "allergy", "metastasis", "abscess", "rash", "vertebra", "bacterium", "diabetes"]
    assert _terms(mentions) == expected
    assert mentions[-1].surface == "diabetes"
    _assert_offsets(text, mentions)


def test_diabetes_is_never_singularised() -> None:
    matcher = _small(("diabetes", "D"), ("diabete", "WRONG"))
    assert [(m.term, m.entity_ids) for m in matcher.find("diabetes")] == [("diabetes", ["D"])]


def test_a_plural_variant_never_displaces_a_real_term() -> None:
    matcher = _small(("aid", "HELP"), ("aids", "DISEASE"))
    assert [m.entity_ids for m in matcher.find("aids and an aid")] == [["DISEASE"], ["HELP"]]


def test_plural_kg_name_matches_its_singular(kg: DictionaryMatcher) -> None:
    mentions = kg.find("He had a seizure last night.")
    assert _terms(mentions) == ["seizures"]
    assert "MESH:D012640" in mentions[0].entity_ids


def test_matches_start_and_end_at_word_boundaries() -> None:
    matcher = _small(("als", "ALS"), ("pain", "P"))
    text = "Swollen tonsils, weak signals, totals and painful spots; pain and ALS."
    mentions = matcher.find(text)
    assert [(m.surface, m.term) for m in mentions] == [("pain", "pain"), ("ALS", "als")]
    _assert_offsets(text, mentions)


def test_kg_acronym_als_is_not_found_inside_words(kg: DictionaryMatcher) -> None:
    assert "als" not in _terms(kg.find("Her tonsils and the hospital's signals were normal."))
    assert "als" in _terms(kg.find("Riluzole is approved for ALS."))


def test_short_ambiguous_kg_names_are_not_matched_in_ordinary_english(kg: DictionaryMatcher) -> None:
    sentences = [
        "She was at home all day and can set the table, but the cat had to rest on the arc of max impact.",
        "It was all we can do on the set; at rest the impact was max and the cell phone was on.",
        "Use the first aid kit and put the pc on the desk.",
    ]
    for sentence in sentences:
        assert kg.find(sentence) == []
    assert {
        "cat",
        "max",
        "was",
        "can",
        "all",
        "impact",
        "pc",
        "set",
        "rest",
        "cell",
        "arc",
    } <= DEFAULT_STOPLIST


def test_all_caps_dictionary_spellings_only_match_all_caps_text(kg: DictionaryMatcher) -> None:
    assert [(m.surface, m.entity_ids) for m in kg.find("Mutations in the KIT gene.")] == [
        ("KIT", ["NCBIGene:3815"])
    ]
    assert kg.find("a first aid kit") == []


def test_short_terms_need_all_caps_in_dictionary_and_text() -> None:
    matcher = _small(("MS", "MS"), ("ab", "AB"), ("NSAID", "N"), stoplist=())
    text = "MS, ms, Ms, ab, AB and NSAIDs"
    assert [(m.surface, m.term) for m in matcher.find(text)] == [("MS", "ms"), ("NSAIDs", "nsaid")]


def test_one_key_keeps_case_sensitive_and_insensitive_entities_apart() -> None:
    matcher = _small(("Seizure", "A"), ("seizure", "B"), ("SEIZURE", "C"))
    assert len(matcher) == 1
    assert [m.entity_ids for m in matcher.find("a seizure")] == [["A", "B"]]
    assert [m.entity_ids for m in matcher.find("A SEIZURE")] == [["A", "B", "C"]]
    assert matcher.entity_ids("seizures") == ["A", "B"]
    assert matcher.entity_ids("SEIZURES") == ["A", "B", "C"]


def test_a_looked_up_name_reaches_an_acronym_only_when_written_in_capitals(kg: DictionaryMatcher) -> None:
    """The planner links a question's leftover words by name: "eGFR 25" (kidney function) is not the EGFR
    gene, which is what a newcomer's metformin question was told it was missing."""
    gene = "NCBIGene:1956"
    assert gene in kg.entity_ids("EGFR")
    assert gene not in kg.entity_ids("eGFR")
    assert gene not in kg.entity_ids("egfr")
    assert [m.surface for m in kg.find("eGFR 25 and EGFR mutations")] == ["EGFR"]


def test_one_surface_form_maps_to_several_kg_entities(kg: DictionaryMatcher) -> None:
    (mention,) = kg.find("Down syndrome")
    assert {"DOID:14250", "MESH:D004314"} <= set(mention.entity_ids)


@pytest.mark.parametrize(
    "prefix",
    [
        "İİİ İstanbul: ",  # 'İ'.lower() is two characters
        "Sjo\u0308gren and cafe\u0301 (combining marks), ",
        "emoji 😀😀 and \u00a0non-breaking\u2003spaces,   runs  of   spaces, ",
        "soft\u00adhyphen and zero\u200bwidth, ",
        "ﬁ ligature, Ǆ digraph, ß, ΣΑΣ, ",
    ],
)
def test_offsets_are_exact_after_odd_unicode(prefix: str) -> None:
    matcher = _small(("chest pain", "CP"), ("Sjögren syndrome", "SS"))
    text = prefix + "chest   pain and SJÖGREN-SYNDROME."
    mentions = matcher.find(text)
    assert _terms(mentions) == ["chest pain", "sjogren syndrome"]
    assert mentions[0].start == text.index("chest")
    assert mentions[1].surface == "SJÖGREN-SYNDROME"
    _assert_offsets(text, mentions)


def test_match_spanning_deleted_characters_keeps_original_surface() -> None:
    matcher = _small(
        ("Sjögren syndrome", "SS"),
    )
    text = "İ Sjo\u0308gren\u00ad  syndrome\u0301 x"
    (mention,) = matcher.find(text)
    assert mention.surface == "Sjo\u0308gren\u00ad  syndrome\u0301"
    _assert_offsets(text, [mention])


def test_hyphens_and_whitespace_runs_are_interchangeable(kg: DictionaryMatcher) -> None:
    matcher = _small(
        ("type 2 diabetes", "T2D"),
    )
    for text in ["type-2 diabetes", "Type 2  diabetes", "type\u20112\ndiabetes", "TYPE–2 diabetes"]:
        assert _terms(matcher.find(text)) == ["type 2 diabetes"], text
    (mention,) = kg.find("Lambert Eaton myasthenic syndrome")
    assert "DOID:0050214" in mention.entity_ids


def test_a_spaced_dash_separates_list_items() -> None:
    matcher = _small(("mouth sores", "MS"), ("mouth", "M"), ("sores", "S"))
    text = "Mouth sores - Pain\nMouth    -  Sores\n- mouth\n-sores"
    assert _terms(matcher.find(text)) == ["mouth sores", "mouth", "sores", "mouth", "sores"]


def test_possessive_eponyms_match_both_spellings(kg: DictionaryMatcher) -> None:
    matcher = _small(("Alzheimer disease", "AD"), ("Crohn's disease", "CD"))
    text = "Alzheimer’s disease, Alzheimer disease, Crohn disease and Crohn's disease"
    assert [m.entity_ids for m in matcher.find(text)] == [["AD"], ["AD"], ["CD"], ["CD"]]
    assert "DOID:10652" in kg.find("Parkinson and Alzheimer's disease")[-1].entity_ids


def test_normalise_term() -> None:
    assert normalise_term("  Type-2   Diabetes ") == "type 2 diabetes"
    assert normalise_term("Sjögren’s syndrome") == "sjogren's syndrome"
    assert normalise_term("İnfection") == "infection"


def test_kg_artefact_fragments_are_not_terms(kg: DictionaryMatcher) -> None:
    assert kg.entity_ids("inflammation of the") == []
    assert _terms(kg.find("inflammation of the joints")) == ["inflammation", "joint"]


def test_a_final_capital_a_is_a_type_letter_not_an_article(kg: DictionaryMatcher) -> None:
    """ "hepatitis A" and "Vitamin A" were dropped as fragments ending in the article "a", so "hepatitis A"
    linked only "hepatitis" and Vitamin A (106 KG edges) could not be linked at all."""
    assert kg.entity_ids("hepatitis A") == ["DOID:12549"]
    assert "DRUGBANK:DB00162" in kg.entity_ids("Vitamin A")
    found = kg.find("Symptoms of hepatitis A can occur 2 to 7 weeks after contact; take vitamin A daily.")
    assert [m.entity_ids for m in found if m.term.endswith(" a")] == [["DOID:12549"], ["DRUGBANK:DB00162"]]
    # the lower-case article after a name is not the letter: "hepatitis a few weeks ago" is hepatitis
    assert _terms(kg.find("He had hepatitis a few weeks ago.")) == ["hepatitis"]


def test_real_medquad_sentence(kg: DictionaryMatcher) -> None:
    text = (
        "Adult acute lymphoblastic leukemia (ALL) is a type of cancer in which the bone marrow makes too many"
    )
    mentions = kg.find(text + " lymphocytes (a type of white blood cell).")
    assert _terms(mentions) == [
        "acute lymphoblastic leukemia", "cancer", "bone marrow", "lymphocytes", "blood",
    ]  # fmt: skip
    assert "DOID:9952" in mentions[0].entity_ids


def test_negation_stops_at_termination_words(kg: DictionaryMatcher) -> None:
    text = "Patient denies chest pain but reports fever."
    mentions = kg.find(text, with_negation=True)
    assert [(m.term, m.negated) for m in mentions] == [("chest pain", True), ("fever", False)]
    plain = kg.find(text)
    assert [m.negated for m in plain] == [False, False]
    assert mark_negations(text, plain) == mentions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No evidence of pneumonia or fever.", [True, True]),
        ("Pneumonia was ruled out; fever persists.", [True, False]),
        ("No fever. Cough since Monday.", [True, False]),
        ("Negative for fever, however cough is present.", [True, False]),
        ("Absence of fever, cough is unlikely.", [True, True]),
        ("There is no cure for cystic fibrosis.", [False]),
        ("It is not known what causes cystic fibrosis.", [False]),
        ("No one in the family, neighbours, friends, or classmates had fever.", [False]),
        ("He does not have fever - cough - headache", [True, False, False]),
        ("Without treatment, fever returns.", [True]),
    ],
)
def test_negation_cases(text: str, expected: list[bool]) -> None:
    matcher = _small(
        ("pneumonia", "P"), ("fever", "F"), ("cough", "C"), ("cystic fibrosis", "CF"), ("headache", "H")
    )
    assert [m.negated for m in matcher.find(text, with_negation=True)] == expected


def test_negation_window_is_five_tokens() -> None:
    matcher = _small(
        ("fever", "F"),
    )
    assert matcher.find("no recent or past high grade fever", with_negation=True)[0].negated
    assert not matcher.find("no recent or past very high grade fever", with_negation=True)[0].negated


def test_mentions_are_frozen() -> None:
    (mention,) = _small(
        ("fever", "F"),
    ).find("fever")
    with pytest.raises(ValidationError):
        mention.start = 3  # type: ignore[misc]


def test_find_many_equals_find(kg: DictionaryMatcher) -> None:
    texts = ["Patient denies chest pain.", "", "Seizures and allergies.", "nothing here"]
    assert kg.find_many(texts) == [kg.find(t) for t in texts]


def test_save_load_round_trip(kg: DictionaryMatcher, tmp_path: Path) -> None:
    path = tmp_path / "ner.pkl"
    kg.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["ner.pkl"]  # no temporary file left behind
    loaded = DictionaryMatcher.load(path)
    text = "Type 2 diabetes mellitus with seizures; mutations in the KIT gene; no fever."
    assert len(loaded) == len(kg)
    assert loaded.find(text, with_negation=True) == kg.find(text, with_negation=True)


def test_empty_dictionary_round_trips(tmp_path: Path) -> None:
    empty = DictionaryMatcher.build([])
    empty.save(tmp_path / "empty.pkl")
    loaded = DictionaryMatcher.load(tmp_path / "empty.pkl")
    assert len(loaded) == 0
    assert loaded.find("fever") == []


def test_corrupt_file_raises_value_error_naming_it(tmp_path: Path) -> None:
    matcher = _small(
        ("fever", "F"),
    )
    path = tmp_path / "ner.pkl"
    matcher.save(path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match=r"ner\.pkl"):
        DictionaryMatcher.load(path)
    path.write_bytes(b"not a pickle at all")
    with pytest.raises(ValueError, match=r"ner\.pkl"):
        DictionaryMatcher.load(path)


def test_other_version_or_foreign_pickle_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.pkl"
    old.write_bytes(pickle.dumps({"format": "evigraph-dictionary-matcher", "version": FORMAT_VERSION + 1}))
    with pytest.raises(ValueError, match=r"old\.pkl.*version"):
        DictionaryMatcher.load(old)
    foreign = tmp_path / "foreign.pkl"
    foreign.write_bytes(pickle.dumps([1, 2, 3]))
    with pytest.raises(ValueError, match=r"foreign\.pkl"):
        DictionaryMatcher.load(foreign)
