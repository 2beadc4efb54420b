"""Loader for generic document JSONL: ``{"id", "title", "text", "source", "url", "date"}`` per line.

Optional fields: ``label`` (default ``general``), ``focus`` (the keyword entity's name; when absent the
builder picks the entity the document mentions most), ``license``.
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
from graphs.building.loaders.pubmed_passages import is_pubmed_passage

REQUIRED = ("id", "text")
TEXT_FIELDS = ("title", "text", "source", "url", "date", "label", "focus", "license")


@register_corpus_loader
class GenericDocumentLoader(CorpusLoader):
    format = "documents"
    description = "JSONL with id, title, text, source, url, date (optional label, focus, license)"

    @classmethod
    def detect(cls, path: Path) -> bool:
        keys = first_json_keys(path)
        return (
            path.is_file() and {"id", "text"} <= keys and "qtype" not in keys and not is_pubmed_passage(keys)
        )

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        for n, obj in read_jsonl(path, report):
            wrong = non_string_fields(obj, TEXT_FIELDS)
            ident = obj.get("id")
            if ident is not None and (not isinstance(ident, str | int) or isinstance(ident, bool)):
                wrong.insert(0, f"id ({type(ident).__name__})")
            if wrong:
                report.skip(path, n, f"field(s) must be text (a JSON string): {', '.join(wrong)}")
                continue
            missing = [k for k in REQUIRED if not str(obj.get(k) or "").strip()]
            if missing:
                report.skip(path, n, f"missing or empty field(s): {', '.join(missing)}")
                continue
            report.rows_ok += 1
            yield SourceDocument(
                id=f"doc:{obj['id']}",
                title=" ".join(str(obj.get("title") or obj["id"]).split()),
                text=str(obj["text"]),
                source=str(obj.get("source") or "documents"),
                label=str(obj.get("label") or "general").lower(),
                url=str(obj.get("url") or ""),
                date=str(obj.get("date") or ""),
                license=str(obj.get("license") or ""),
                focus=" ".join(str(obj.get("focus") or "").split()),
            )
