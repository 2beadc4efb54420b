"""Loader for a folder of documents (``evigraph kb add notes/``): each Markdown, text or HTML file is one
document; drug labels, PubMed XML and EviGraph JSONL files in the folder are read by their own format.

What a file becomes: title from its first heading (Markdown ``#``…, HTML ``<title>`` or ``<h1>``), else
from its name; HTML as plain text (html_text.py: scripts and styles dropped, stored as text, never run);
Markdown and text as written. The id is ``file:<folder>/<relative path>``, so re-adding the folder replaces
changed files and leaves the others as they were; the folder's name keeps two folders' ``README.md`` apart.
The label is ``general`` (what a note says is read from its sentences), the source ``local files: <folder>``.

What is skipped, each listed in the load report with its path: binary files and files that are not valid
UTF-8 ("not text" — no guessing of a legacy encoding: a wrong guess would store a changed dose or a
garbled name, so the user re-saves the file as UTF-8; UTF-16 with a byte-order mark is read), other file
types (``.csv``, ``.pdf``, ``.docx`` …), empty files and files over 50 MB. Hidden files and folders (``.git``,
``.DS_Store``) are passed over silently, and symbolic links to folders are not followed (no cycles).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from graphs.building.loaders.base import (
    CORPUS_LOADERS,
    CorpusLoader,
    LoadReport,
    SourceDocument,
    register_corpus_loader,
)
from graphs.building.loaders.html_text import html_to_text

TEXT_KINDS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
}
DATA_SUFFIXES = frozenset({".xml", ".json", ".jsonl", ".ndjson", ".gz"})
MAX_FILE_BYTES = 50 * 1024 * 1024
SNIFF_BYTES = 8192
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def files_of(folder: Path) -> Iterator[Path]:
    """Files under ``folder`` in a stable order, hidden ones and linked folders left out."""
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(top) / name


def is_binary(sample: bytes) -> bool:
    return b"\x00" in sample and not sample.startswith(UTF16_BOMS)


def decode(data: bytes) -> str | None:
    """UTF-8 (BOM allowed) or UTF-16 with a BOM; ``None`` for anything else."""
    try:
        return data.decode("utf-16") if data.startswith(UTF16_BOMS) else data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def title_and_text(kind: str, raw: str, stem: str) -> tuple[str, str]:
    if kind == "html":
        title, text = html_to_text(raw)
    else:
        heading = _HEADING.search(raw) if kind == "markdown" else None
        title, text = (heading.group(1).strip() if heading else ""), raw.strip()
    return title or " ".join(re.split(r"[_\-\s]+", stem)).strip(), text


@register_corpus_loader
class TextFolderLoader(CorpusLoader):
    format = "folder"
    description = (
        "a folder of Markdown/text/HTML files, one document each (drug-label, PubMed and JSONL files in it "
        "are read by their own format)"
    )

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_dir()

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        base = path if path.is_dir() else path.parent
        name = base.resolve().name or "folder"
        files = list(files_of(path)) if path.is_dir() else [path]
        if not files:
            report.skip(path, 0, "the folder holds no files")
        for file in files:
            yield from self._file(file, f"{name}/{file.relative_to(base).as_posix()}", name, report)

    def _file(self, file: Path, ident: str, folder: str, report: LoadReport) -> Iterator[SourceDocument]:
        suffix = file.suffix.lower()
        try:
            size = file.stat().st_size
            with file.open("rb") as fh:
                sample = fh.read(SNIFF_BYTES)
        except OSError as exc:
            report.skip(file, 0, f"cannot be read ({exc.strerror or exc})")
            return
        kind = TEXT_KINDS.get(suffix)
        if kind is None and (suffix in DATA_SUFFIXES or sample.startswith(b"\x1f\x8b")):
            others = (c for c in CORPUS_LOADERS.values() if c is not type(self))
            loader = next((c for c in others if c.detect(file)), None)
            if loader is not None:
                yield from loader().load(file, report)
            else:
                report.skip(file, 0, "not a format EviGraph reads (drug label, PubMed XML, EviGraph JSONL)")
            return
        if is_binary(sample):
            report.skip(file, 0, "not text (a binary file): skipped")
            return
        if kind is None:
            what = suffix or "no extension"
            report.skip(file, 0, f"not text EviGraph imports ({what}): use .md, .txt or .html")
            return
        if size > MAX_FILE_BYTES:
            report.skip(file, 0, f"larger than {MAX_FILE_BYTES >> 20} MB: split it into smaller files")
            return
        raw = decode(file.read_bytes())
        if raw is None:
            report.skip(file, 0, "not text: not valid UTF-8; re-save the file as UTF-8")
            return
        title, text = title_and_text(kind, raw, file.stem)
        if not text:
            report.skip(file, 0, "empty file: nothing to import")
            return
        report.rows_ok += 1
        yield SourceDocument(
            id=f"file:{ident}",
            title=title,
            text=text,
            source=f"local files: {folder}",
            label="general",
        )
