"""Loader for openFDA drug-label JSON: the API / bulk-download layout ``{"meta": …, "results": [label, …]}``
and JSON Lines with one label record per line. Each label section becomes its own document.

A record's section fields (``indications_and_usage``, ``adverse_reactions``, ``pregnancy`` …, each a list
of strings) map through the same table as the DailyMed SPL importer (label_sections.py): one document per
field, titled "<Drug> — <Section>", labelled with the aspect it answers, linked to the label's DailyMed
page by ``set_id`` (or ``openfda.spl_set_id``), dated by ``effective_time``. The drug is named from
``openfda.brand_name`` / ``generic_name`` (an unharmonised label without them, from the first words of
``spl_product_data_elements``). ``*_table`` fields are skipped: their text is already in the section.

Why the streaming reader below and not ``json.load``: an openFDA bulk download is one JSON object of
hundreds of MB whose labels all sit in one ``results`` array, and ``ijson`` is not a dependency. The reader
walks the top-level object itself and hands each element of ``results`` to ``json.JSONDecoder.raw_decode``
over a buffer that it refills from the file, dropping what was consumed — so memory holds one label (plus a
1 MB read buffer), whatever the file size. A label larger than the buffer grows the buffer to its size (the
decoder retries on the longer text; doubling keeps that linear). Malformed JSON ends the file with one
report line (file, line) and keeps the labels before it. JSON Lines are read line by line (base.read_jsonl).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from graphs.building.loaders.base import (
    CorpusLoader,
    LoadReport,
    SourceDocument,
    open_text,
    read_jsonl,
    register_corpus_loader,
)
from graphs.building.loaders.label_sections import BY_FIELD, NO_SECTIONS, LabelDocuments, drug_identity
from graphs.building.loaders.xml_stream import head, open_binary

SOURCE = "openFDA"
LICENSE = "FDA drug label via openFDA (public domain, CC0 1.0)"
CHUNK = 1 << 20
FIRST_LINE_LIMIT = 4 << 20
CUT_MARGIN = 32
"""A decode error this close to the buffer's end may be a value cut by the read; further back, it is not."""
LABEL_KEYS = frozenset({"openfda", "set_id", "effective_time", "spl_product_data_elements"})
_RESULTS_ARRAY = re.compile(r'"results"\s*:\s*\[')
_DECODER = json.JSONDecoder()
KEPT = "; the labels before it were read, the rest of the file was not"


def _label_like(keys: set[str]) -> bool:
    return bool(keys & LABEL_KEYS) and bool(keys & BY_FIELD.keys())


def first_line_object(path: Path) -> Any:
    """The first line parsed as JSON (``None`` when it is not a whole JSON value: a pretty-printed file)."""
    try:
        with open_binary(path) as fh:
            return json.loads(fh.readline(FIRST_LINE_LIMIT).decode("utf-8-sig"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def is_json_lines(path: Path) -> bool:
    obj = first_line_object(path)
    return isinstance(obj, dict) and not isinstance(obj.get("results"), list)


def layout(path: Path) -> str:
    """``"lines"`` (JSON Lines of labels), ``"results"`` (``{"results": [labels]}``) or ``""``."""
    obj = first_line_object(path)
    if obj is None:
        text = head(path).decode("utf-8", "replace")
        if not text.lstrip("\ufeff \t\r\n").startswith("{"):
            return ""
        found = _RESULTS_ARRAY.search(text)
        keys = set(re.findall(r'"(\w+)"\s*:', text[found.end() :])) if found else set()
        return "results" if _label_like(keys) else ""
    if not isinstance(obj, dict):
        return ""
    results = obj.get("results")
    if isinstance(results, list):
        first = results[0] if results else {"openfda": {}, "indications_and_usage": []}
        return "results" if isinstance(first, dict) and _label_like(set(first)) else ""
    return "lines" if _label_like(set(obj)) else ""


class _Stream:
    """A growing window on a text file for ``raw_decode``: consumed text is dropped on refill."""

    def __init__(self, fh: TextIO) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.lines = 0  # newlines in the file before buffer index ``counted``
        self.counted = 0
        self.eof = False

    def fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.fh.read(max(CHUNK, len(self.buf) - self.pos))
        if not chunk:
            self.eof = True
            return False
        self.line(self.pos)  # count the text about to be dropped
        self.counted -= self.pos
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def line(self, pos: int | None = None) -> int:
        """Line number (1-based) of buffer position ``pos`` (default: the read position); newlines are
        counted once, from the last counted position on (counting from the buffer start for every label
        made reading 20 000 labels take seconds)."""
        pos = self.pos if pos is None else pos
        if pos < self.counted:
            return 1 + self.lines - self.buf.count("\n", pos, self.counted)
        self.lines += self.buf.count("\n", self.counted, pos)
        self.counted = pos
        return 1 + self.lines

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf) or not self.fill():
                return self.buf[self.pos : self.pos + 1]

    def take(self, allowed: str) -> str:
        char = self.peek()
        if not char or char not in allowed:
            found = f"'{char}'" if char else "the end of the file"
            raise ValueError(f"expected one of {' '.join(allowed)} but found {found}")
        self.pos += 1
        return char

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # more text can complete a value cut at the buffer's end, never one broken before it
                cut = exc.pos >= len(self.buf) - CUT_MARGIN or exc.msg.startswith("Unterminated string")
                if cut and self.fill():
                    continue
                raise
            if end == len(self.buf) and self.fill():  # a number may go on in the next chunk
                continue
            self.pos = end
            return obj


def results_records(path: Path, report: LoadReport) -> Iterator[tuple[int, Any]]:
    """(line, element) of the top-level ``results`` array, read one element at a time."""
    with open_text(path) as fh:
        stream = _Stream(fh)
        try:
            stream.take("{")
            while stream.peek() != "}":
                key = stream.value()
                stream.take(":")
                if key == "results" and stream.peek() == "[":
                    stream.take("[")
                    while stream.peek() != "]":
                        line = stream.line()
                        yield line, stream.value()
                        if stream.take(",]") == "]":
                            break
                    else:
                        stream.take("]")
                else:
                    stream.value()  # meta: small
                if stream.take(",}") == "}":
                    return
        except json.JSONDecodeError as exc:  # the position is in the buffer the decoder was given
            report.skip(path, stream.line(exc.pos), f"malformed JSON ({exc.msg}){KEPT}")
        except UnicodeDecodeError:
            report.skip(path, stream.line(), f"not valid UTF-8: re-save the file as UTF-8{KEPT}")
        except ValueError as exc:
            report.skip(path, stream.line(), f"malformed JSON ({exc}){KEPT}")


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def label_documents(record: Any, path: Path, line: int, report: LoadReport) -> Iterator[SourceDocument]:
    """The section documents of one openFDA label record."""
    if not isinstance(record, dict):
        report.skip(path, line, "a label record is not a JSON object")
        return
    names: dict[str, Any] = record["openfda"] if isinstance(record.get("openfda"), dict) else {}

    def first(key: str) -> str:
        values = _strings(names.get(key)) or [""]
        return values[0].strip()

    set_id = str(record.get("set_id") or first("spl_set_id") or "").strip()
    ident = set_id or str(record.get("id") or first("spl_id") or "").strip()
    if not ident:
        report.skip(path, line, "a label record has neither set_id nor id")
        return
    brand, generic = first("brand_name"), first("generic_name")
    if not (brand or generic):
        elements = _strings(record.get("spl_product_data_elements")) or [""]
        brand = " ".join(elements[0].split()[:4])
    label = LabelDocuments(
        ident=ident,
        set_id=set_id,
        drug=drug_identity(brand, generic),
        date=str(record.get("effective_time") or ""),
        source=SOURCE,
        license=LICENSE,
    )
    found = 0
    for key, value in record.items():
        kind = BY_FIELD.get(key)
        if kind is None:
            continue
        texts = _strings(value)
        if texts is None:
            wrong = type(value).__name__
            report.skip(path, line, f"label {ident}: field {key} is not text ({wrong}): skipped")
            continue
        text = "\n\n".join(t.strip() for t in texts if t.strip())
        if text:
            found += 1
            report.rows_ok += 1
            yield label.document(kind, text)
    if not found:
        report.skip(path, line, f"label {ident} {NO_SECTIONS}: skipped")


@register_corpus_loader
class OpenFDALabelLoader(CorpusLoader):
    format = "openfda"
    description = 'openFDA drug-label JSON ({"results": [label, ...]}) or JSON Lines of label records'

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_file() and bool(layout(path))

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        if is_json_lines(path):
            for n, obj in read_jsonl(path, report):
                records = obj["results"] if isinstance(obj.get("results"), list) else [obj]
                for record in records:
                    yield from label_documents(record, path, n, report)
            return
        for line, record in results_records(path, report):
            yield from label_documents(record, path, line, report)
