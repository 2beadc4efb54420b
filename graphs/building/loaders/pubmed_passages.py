"""Loader for PubMed passages as ``shared/data`` ships them: BioASQ gold snippets (``id``, ``pmid``,
``section``, ``text``) and PubMedQA abstract paragraphs (``id``, ``pmid``, ``label``, ``text``).

Why a format of its own and not generic documents: these rows have no title, source or URL, and what a
clinician must be told about each is that it is *research literature* — a PubMed abstract, with its PMID
and link — not consumer-health text. The source says so in every citation ("PubMed abstract (research
literature)"); the title is "PubMed <PMID>", the same text the evaluation KBs embed, so the literature
profile's retrieval is the one measured there (bioasq-full recall@10). The evidence label stays
``general``: what a passage says (treatment, cause…) is read from its sentences, as on those KBs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graphs.building.loaders.base import (
    CorpusLoader,
    LoadReport,
    SourceDocument,
    first_json_keys,
    non_string_fields,
    read_jsonl,
    register_corpus_loader,
)

SOURCE = "PubMed abstract (research literature)"
LICENSES = {
    "bioasq": "BioASQ Task B gold snippet of a PubMed abstract (research use, attribution to BioASQ)",
    "pubmedqa": "PubMedQA (MIT), a PubMed abstract paragraph",
}
TEXT_FIELDS = ("id", "pmid", "section", "label", "text")


def is_pubmed_passage(keys: set[str]) -> bool:
    """Rows with a PMID and text but no title: a snippet (``section``) or a paragraph (``label``)."""
    return {"pmid", "text"} <= keys and bool({"section", "label"} & keys) and "title" not in keys


@register_corpus_loader
class PubMedPassageLoader(CorpusLoader):
    format = "pubmed_passages"
    description = "JSONL with id, pmid, text and section (BioASQ snippets) or label (PubMedQA paragraphs)"

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_file() and is_pubmed_passage(first_json_keys(path))

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        for n, obj in read_jsonl(path, report):
            wrong = non_string_fields(obj, TEXT_FIELDS)
            if wrong:
                report.skip(path, n, f"field(s) must be text (a JSON string): {', '.join(wrong)}")
                continue
            missing = [k for k in ("id", "pmid", "text") if not str(obj.get(k) or "").strip()]
            if missing:
                report.skip(path, n, f"missing or empty field(s): {', '.join(missing)}")
                continue
            pmid = str(obj["pmid"]).strip()
            report.rows_ok += 1
            yield SourceDocument(
                id=f"pubmed:{obj['id']}",
                title=f"PubMed {pmid}",
                text=str(obj["text"]),
                source=SOURCE,
                label="general",
                url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
                license=LICENSES["bioasq" if "section" in obj else "pubmedqa"],
            )
