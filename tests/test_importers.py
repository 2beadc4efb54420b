"""The real-format importers on real public documents (tests/fixtures/importers/, sources in its README):
PubMed XML, DailyMed SPL, openFDA labels and folders of Markdown/text/HTML — detection from content, the
documents they make, and every bad input of issue 21 (a report line, never a traceback)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from graphs.building.incremental import validated_documents
from graphs.building.loaders import LoadReport, SourceDocument, detect_corpus_loader
from graphs.building.loaders.label_sections import BY_CODE, NO_SECTIONS, SECTIONS, drug_identity
from graphs.building.loaders.pubmed_passages import SOURCE as RESEARCH_LITERATURE
from graphs.model.labels import LABEL_KEYWORDS, labels_asked

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "importers"
PUBMED = FIXTURES / "pubmed_nlm_sample.xml"
SPL = FIXTURES / "spl_haloperidol.xml"
SPL_EMPTY = FIXTURES / "spl_methoxsalen_indexing.xml"
OPENFDA = FIXTURES / "openfda_sudafed.json"
OPENFDA_LINES = FIXTURES / "openfda_vyvanse.jsonl"
HALOPERIDOL = "0027b8a3-73bf-4005-a7e3-b035f451a861"
VYVANSE = "704e4378-ca83-445c-8b45-3cfa51c1ecad"


def load(path: Path, fmt: str | None = None) -> tuple[list[SourceDocument], LoadReport]:
    report = LoadReport()
    return list(detect_corpus_loader(path, fmt).load(path, report)), report


def reasons(report: LoadReport) -> list[str]:
    return [f"{Path(i.path).name}:{i.line}: {i.reason}" for i in report.issues]


# ----- detection from content -----


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (PUBMED, "pubmed"),
        (SPL, "dailymed"),
        (SPL_EMPTY, "dailymed"),
        (OPENFDA, "openfda"),
        (OPENFDA_LINES, "openfda"),
    ],
)
def test_each_format_is_told_by_its_content_not_its_name(path: Path, fmt: str, tmp_path: Path) -> None:
    renamed = tmp_path / "upload.dat"
    renamed.write_bytes(path.read_bytes())
    assert detect_corpus_loader(path).format == fmt
    assert detect_corpus_loader(renamed).format == fmt
    zipped = tmp_path / "upload.dat.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    assert detect_corpus_loader(zipped).format == fmt
    assert detect_corpus_loader(tmp_path).format == "folder"


def test_a_format_suffix_forces_the_loader_and_a_wrong_one_reports_instead_of_crashing() -> None:
    assert detect_corpus_loader(OPENFDA, "pubmed").format == "pubmed"
    docs, report = load(OPENFDA, "pubmed")  # JSON read as XML: one line says where it broke
    assert docs == [] and "the XML breaks here" in reasons(report)[0]
    docs, report = load(PUBMED, "openfda")
    assert docs == [] and "malformed JSON" in reasons(report)[0]
    docs, report = load(PUBMED, "dailymed")
    assert docs == [] and "not a drug label" in reasons(report)[0]


# ----- PubMed -----


def test_pubmed_articles_are_cited_as_research_literature_with_mesh_and_dates() -> None:
    docs, report = load(PUBMED)
    by_id = {d.id: d for d in docs}
    assert list(by_id) == ["pmid:12269810", "pmid:21179314"]
    apo = by_id["pmid:12269810"]
    assert apo.title.startswith("Structures of apolipoprotein A-II and a lipid-surrogate complex")
    assert apo.url == "https://pubmed.ncbi.nlm.nih.gov/12269810/"
    # cited as the literature profile's passages are; labelled ``general``, since the key sentences hide a
    # ``research`` passage's sentences unless the question asks about research
    assert (apo.source, apo.label, apo.date) == (RESEARCH_LITERATURE, "general", "2002-10-01")
    assert RESEARCH_LITERATURE == "PubMed abstract (research literature)"
    assert apo.focus == "Apolipoprotein A-II"  # first descriptor with a major-topic mark (its qualifier)
    assert apo.text.startswith("Apolipoproteins A-I and A-II form the major protein constituents")
    assert apo.text.endswith("Static Electricity; Structure-Activity Relationship.")
    assert "\n\nMeSH terms: Amino Acid Sequence; Apolipoprotein A-II;" in apo.text
    epoxy = by_id["pmid:21179314"]
    assert epoxy.date == "2010-10-09"  # the electronic date is more precise than "2010 Oct-Dec"
    assert epoxy.focus == "" and "MeSH" not in epoxy.text
    assert reasons(report) == [
        "pubmed_nlm_sample.xml:0: PMID 30299937 has no abstract (a title-only record): too little text to "
        "cite"
    ]


def _article(pmid: str, title: str, *abstract: tuple[str, str]) -> str:
    blocks = "".join(f'<AbstractText Label="{label}">{text}</AbstractText>' for label, text in abstract)
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><Journal><JournalIssue><PubDate>"
        f"<Year>2020</Year><Month>Mar</Month></PubDate></JournalIssue></Journal><ArticleTitle>{title}"
        f"</ArticleTitle><Abstract>{blocks}</Abstract></Article></MedlineCitation></PubmedArticle>"
    )


def test_labelled_abstract_sections_stay_one_paragraph_each(tmp_path: Path) -> None:
    path = tmp_path / "trial.xml"
    sections = [("BACKGROUND", "Why <i>we</i> asked."), ("RESULTS", "HbA<sub>1c</sub> fell by 1%.")]
    path.write_text(f"<PubmedArticleSet>{_article('111', 'A trial', *sections)}</PubmedArticleSet>")
    (doc,), _ = load(path)
    assert doc.text == "BACKGROUND: Why we asked.\n\nRESULTS: HbA1c fell by 1%."
    assert doc.date == "2020-03"


def test_truncated_or_invalid_xml_keeps_the_articles_before_the_break(tmp_path: Path) -> None:
    data = PUBMED.read_bytes()
    cut = data.index(b'<PMID Version="1">21179314') + 40
    truncated = tmp_path / "truncated.xml"
    truncated.write_bytes(data[:cut])
    docs, report = load(truncated)
    assert [d.id for d in docs] == ["pmid:12269810"]
    (issue,) = report.issues
    assert issue.line == data[:cut].count(b"\n") + 1 and "the XML breaks here" in issue.reason
    zipped = tmp_path / "truncated.xml.gz"
    zipped.write_bytes(gzip.compress(data)[:-300])  # a download that stopped early
    docs, report = load(zipped)
    assert [d.id for d in docs] == ["pmid:12269810", "pmid:21179314"]
    assert "cannot be read to its end" in reasons(report)[-1]
    broken = tmp_path / "mismatched.xml"
    broken.write_text(f"<PubmedArticleSet>{_article('1', 'One', ('', 'Text one.'))}<PubmedArticle></Oops>")
    docs, report = load(broken)
    assert [d.id for d in docs] == ["pmid:1"] and "mismatched tag" in reasons(report)[0]


def test_duplicate_pmids_in_one_file_the_last_wins(tmp_path: Path) -> None:
    path = tmp_path / "dup.xml"
    first, second = (
        _article("7", "Old title", ("", "Old text.")),
        _article("7", "New title", ("", "New text.")),
    )
    path.write_text(f"<PubmedArticleSet>{first}{second}</PubmedArticleSet>")
    report = LoadReport()
    (doc,) = validated_documents(path, None, report)
    assert (doc.title, doc.text) == ("New title", "New text.")
    assert "document pmid:7 appears more than once: the last version was kept" in reasons(report)[0]


# ----- drug labels -----


def test_spl_sections_become_labelled_documents_named_after_the_drug() -> None:
    docs, report = load(SPL)
    by_key = {d.id.rsplit(":", 1)[1]: d for d in docs}
    assert list(by_key) == [
        "boxed_warning",
        "clinical_pharmacology",
        "indications_and_usage",
        "contraindications",
        "warnings",
        "pregnancy",
        "precautions",
        "adverse_reactions",
    ]
    assert {k: d.label for k, d in by_key.items()} == {
        "boxed_warning": "side effects",
        "clinical_pharmacology": "mechanism",
        "indications_and_usage": "treatment",
        "contraindications": "contraindications",
        "warnings": "side effects",
        "pregnancy": "pregnancy",
        "precautions": "side effects",
        "adverse_reactions": "side effects",
    }
    adverse = by_key["adverse_reactions"]
    assert adverse.id == f"label:{HALOPERIDOL}:adverse_reactions"
    assert adverse.title == "Haloperidol — Adverse reactions"
    assert adverse.url == f"https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid={HALOPERIDOL}"
    assert (adverse.source, adverse.date, adverse.focus, adverse.focus_type) == (
        "DailyMed",
        "2010-07-28",
        "haloperidol",
        "Drug",
    )
    # sub-sections travel with their parent, headings included; a nested pregnancy section is its own
    assert adverse.text.startswith("Cardiovascular Effects\nTachycardia, hypotension, and hypertension")
    assert "Dystonia\nClass Effect\nSymptoms of dystonia" in adverse.text
    assert by_key["pregnancy"].title == "Haloperidol — Usage in Pregnancy"
    assert "Usage in Pregnancy" not in by_key["warnings"].text and "Cardiovascular" in by_key["warnings"].text
    assert "Pediatric Use\nSafety and effectiveness" in by_key["precautions"].text
    assert report.issues == [] and report.rows_ok == 8


def test_an_spl_with_no_readable_section_is_skipped_with_a_reason() -> None:
    docs, report = load(SPL_EMPTY)
    assert docs == []
    assert "label ea1a6225-0eb9-4743-9601-23d5795936a3 has no section EviGraph reads" in reasons(report)[0]


def test_truncated_spl_keeps_the_sections_read_before_the_break(tmp_path: Path) -> None:
    data = SPL.read_bytes()
    path = tmp_path / "cut.xml"
    path.write_bytes(data[: data.index(b'code="42232-9"')])  # stops inside Precautions
    docs, report = load(path)
    assert [d.id.rsplit(":", 1)[1] for d in docs][-2:] == ["warnings", "pregnancy"]
    assert "the XML breaks here" in reasons(report)[0]


def test_openfda_records_in_both_layouts_map_fields_to_labels() -> None:
    docs, report = load(OPENFDA)
    sudafed = {d.id.rsplit(":", 1)[1]: d.label for d in docs}
    assert sudafed == {
        "indications_and_usage": "treatment",
        "stop_use": "side effects",
        "ask_doctor": "contraindications",
        "dosage_and_administration": "treatment",
        "purpose": "treatment",
        "do_not_use": "contraindications",
        "warnings": "side effects",
        "when_using": "side effects",
    }  # storage, package label, ingredients and *_table fields are not evidence
    docs, report = load(OPENFDA_LINES)
    by_key = {d.id.rsplit(":", 1)[1]: d for d in docs}
    adverse = by_key["adverse_reactions"]
    assert adverse.id == f"label:{VYVANSE}:adverse_reactions"  # the set id from openfda.spl_set_id
    assert adverse.title == "Vyvanse (lisdexamfetamine dimesylate) — Adverse reactions"
    assert (adverse.source, adverse.label, adverse.date) == ("openFDA", "side effects", "2015-04-01")
    assert adverse.focus == "lisdexamfetamine" and "Vyvanse" in adverse.focus_synonyms
    assert by_key["pregnancy"].label == by_key["nursing_mothers"].label == "pregnancy"
    assert by_key["drug_interactions"].label == "interactions" and report.issues == []


def _results_file(path: Path, records: list[object], indent: int | None = 2) -> Path:
    path.write_text(
        json.dumps({"meta": {"results": {"total": len(records)}}, "results": records}, indent=indent)
    )
    return path


def _label(set_id: str, text: str) -> dict[str, object]:
    return {
        "set_id": set_id,
        "openfda": {"generic_name": ["METFORMIN HYDROCHLORIDE"]},
        "adverse_reactions": [text],
    }


def test_openfda_malformed_json_keeps_the_labels_before_it(tmp_path: Path) -> None:
    path = _results_file(tmp_path / "labels.json", [_label("a", "Nausea."), _label("b", "Diarrhea.")])
    text = path.read_text()
    path.write_text(text.replace('"b",', '"b" "broken",'))
    docs, report = load(path)
    assert [d.id for d in docs] == ["label:a:adverse_reactions"]
    (issue,) = report.issues
    assert "malformed JSON" in issue.reason and issue.line == text[: text.index('"b",')].count("\n") + 1
    one_line = _results_file(tmp_path / "one_line.json", [_label("c", "Lactic acidosis.")], indent=None)
    docs, _ = load(one_line)
    assert [d.title for d in docs] == ["Metformin hydrochloride — Adverse reactions"]


def test_openfda_a_label_larger_than_the_read_buffer_is_read_whole(tmp_path: Path) -> None:
    big = "Nausea and vomiting were reported. " * 90_000  # ~3 MB: three times the 1 MB read buffer
    path = _results_file(tmp_path / "big.json", [_label("a", "x"), _label("big", big), _label("z", "y")])
    docs, report = load(path)
    assert [d.id.split(":")[1] for d in docs] == ["a", "big", "z"] and docs[1].text == big.strip()
    assert report.issues == []


def test_openfda_records_without_sections_or_ids_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    rows = [
        {"set_id": "s1", "openfda": {}, "spl_product_data_elements": ["Acme Cream zinc oxide"]},
        {"openfda": {"brand_name": ["X"]}, "warnings": ["Do not swallow."]},
        {"set_id": "s3", "effective_time": "20200101", "warnings": {"not": "text"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    docs, report = load(path, "openfda")
    assert docs == []
    assert reasons(report) == [
        f"odd.jsonl:1: label s1 {NO_SECTIONS}: skipped",
        "odd.jsonl:2: a label record has neither set_id nor id",
        "odd.jsonl:3: label s3: field warnings is not text (dict): skipped",
        f"odd.jsonl:3: label s3 {NO_SECTIONS}: skipped",
    ]
    assert NO_SECTIONS.startswith("has no section EviGraph reads (indications, dosage, contraindications")


def test_the_section_table_is_one_to_one_and_uses_known_labels() -> None:
    assert len(BY_CODE) == sum(len(s.codes) for s in SECTIONS)
    assert {s.label for s in SECTIONS} <= set(LABEL_KEYWORDS)
    assert drug_identity("LIPITOR", "ATORVASTATIN CALCIUM").focus == "atorvastatin"
    assert drug_identity("", "POTASSIUM CHLORIDE").focus == "potassium chloride"
    assert labels_asked("Is it safe to take ibuprofen during pregnancy?") == ["side effects", "pregnancy"]
    assert labels_asked("Can I breastfeed on lisinopril?") == ["pregnancy"]
    assert "pregnancy" not in labels_asked("What causes a high lactate level?")


# ----- folders -----


def _folder(root: Path) -> Path:
    notes = root / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "gout.md").write_text(
        "Intro line\n\n## Gout flares\n\nColchicine early in a flare.\n", encoding="utf-8"
    )
    (notes / "sub" / "page.html").write_text(
        "<html><head><title>Warfarin &amp; diet</title><style>p{color:red}</style></head><body><h1>Other</h1>"
        "<p>Keep vitamin K intake steady.</p><script>alert('x')</script><p>&lt;script&gt; is text here</p>"
        "<ul><li>Leafy greens</li><li>Liver</li></ul></body></html>",
        encoding="utf-8",
    )
    (notes / "plain_note-2024.txt").write_text("Metformin is first line.\n", encoding="utf-8")
    (notes / "windows.txt").write_bytes("Dose: 5 µg daily".encode("cp1252"))
    (notes / "utf16.txt").write_bytes("Insulin glargine once daily.".encode("utf-16"))
    (notes / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (notes / "blob.txt").write_bytes(b"text\x00\x01\x02")
    (notes / "table.csv").write_text("a,b\n1,2\n")
    (notes / "empty.md").write_text("   \n")
    (notes / ".hidden.md").write_text("# secret\n")
    (notes / "labels.xml").write_bytes(SPL.read_bytes())
    return notes


def test_a_folder_imports_text_files_and_lists_what_it_skipped(tmp_path: Path) -> None:
    docs, report = load(_folder(tmp_path))
    by_id = {d.id: d for d in docs}
    assert [i for i in by_id if i.startswith("file:")] == [
        "file:notes/gout.md",
        "file:notes/plain_note-2024.txt",
        "file:notes/utf16.txt",
        "file:notes/sub/page.html",
    ]
    assert sum(i.startswith(f"label:{HALOPERIDOL}:") for i in by_id) == 8  # the SPL in the folder, as SPL
    assert by_id["file:notes/gout.md"].title == "Gout flares"
    assert by_id["file:notes/plain_note-2024.txt"].title == "plain note 2024"
    assert by_id["file:notes/utf16.txt"].text == "Insulin glargine once daily."
    page = by_id["file:notes/sub/page.html"]
    assert page.title == "Warfarin & diet" and page.source == "local files: notes"
    assert page.text == "Other\nKeep vitamin K intake steady.\n<script> is text here\n- Leafy greens\n- Liver"
    assert "alert" not in page.text and "color" not in page.text
    assert reasons(report) == [
        "blob.txt:0: not text (a binary file): skipped",
        "empty.md:0: empty file: nothing to import",
        "scan.png:0: not text (a binary file): skipped",
        "table.csv:0: not text EviGraph imports (.csv): use .md, .txt or .html",
        "windows.txt:0: not text: not valid UTF-8; re-save the file as UTF-8",
    ]


def test_no_label_section_is_hidden_from_the_answer() -> None:
    """A section labelled with a kind the key sentences show only when asked ("research") could never
    answer the question it is about; Clinical studies (efficacy) was one and now answers treatment."""
    from agent.nodes.key_sentences import UNLESS_ASKED
    from graphs.building.loaders.label_sections import BY_FIELD, SECTIONS

    assert not {s.label for s in SECTIONS} & UNLESS_ASKED
    assert BY_FIELD["clinical_studies"].label == "treatment"


# ----- MedQuAD: a known mislabelled document -----


def _shipped_medquad(doc_id: str) -> list[dict]:
    """The shipped MedQuAD pairs of one document, as published (data/corpus, copied unchanged)."""
    path = Path(__file__).resolve().parent.parent / "data" / "corpus" / "medquad_answered.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [row for line in handle if (row := json.loads(line))["doc_id"] == doc_id]


def test_the_lyme_page_labelled_machado_joseph_disease_is_left_out_with_its_reason(tmp_path: Path) -> None:
    lyme_as_mjd = _shipped_medquad("NINDS_0000187")
    assert len(lyme_as_mjd) == 4 and all("Lyme" in r["answer"] for r in lyme_as_mjd[:2])
    other = _shipped_medquad("NINDS_0000186")
    path = tmp_path / "medquad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*lyme_as_mjd, *other]), encoding="utf-8")
    docs, report = load(path, "medquad")
    assert [d.id for d in docs] == [f"medquad:{r['id']}" for r in other]
    assert len(report.issues) == 4
    assert all("NINDS Lyme disease page" in i.reason and "Machado-Joseph" in i.reason for i in report.issues)
    # Only the defect as published: the same id with another URL (a corrected release) loads as usual.
    fixed = [
        {**r, "url": "http://www.ninds.nih.gov/disorders/machado_joseph/machado_joseph.htm"}
        for r in lyme_as_mjd
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in fixed), encoding="utf-8")
    docs, report = load(path, "medquad")
    assert len(docs) == 4 and not report.issues
