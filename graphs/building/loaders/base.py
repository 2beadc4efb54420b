"""Loader interfaces, the format registries, and tolerant line readers.

Why tolerant readers: real exports have the odd broken line. A malformed JSONL line or short TSV row is
skipped and recorded (file and line number) in a :class:`LoadReport` that the builder prints; a problem
that makes the whole file unusable (missing column, unknown format, empty corpus) raises :class:`LoadError`
with the file, the column and the fix.
"""

from __future__ import annotations

import gzip
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TextIO

from graphs.model.schema import Entity, Relation


class LoadError(ValueError):
    """A source file cannot be used at all; the message names the file and what to do."""


@dataclass
class LoadIssue:
    path: str
    line: int
    reason: str


@dataclass
class LoadReport:
    """Rows read and rows skipped (with where and why), per build."""

    rows_ok: int = 0
    issues: list[LoadIssue] = field(default_factory=list)

    def skip(self, path: Path, line: int, reason: str) -> None:
        self.issues.append(LoadIssue(str(path), line, reason))

    def by_reason(self) -> dict[str, int]:
        """``"file: reason"`` → rows skipped for it, most first (what ``kb info`` explains)."""
        counts: dict[str, int] = {}
        for i in self.issues:
            key = f"{Path(i.path).name}: {i.reason}"
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self, limit: int = 20) -> list[str]:
        lines = [
            f"{i.path}:{i.line}: {i.reason}" if i.line else f"{i.path}: {i.reason}"
            for i in self.issues[:limit]
        ]
        if len(self.issues) > limit:
            lines.append(f"… and {len(self.issues) - limit} more skipped rows")
        return lines


@dataclass(frozen=True)
class SourceDocument:
    """A document as read from a corpus, before chunking and linking."""

    id: str
    title: str
    text: str
    source: str
    label: str
    url: str = ""
    date: str = ""
    license: str = ""
    focus: str = ""
    focus_cuis: tuple[str, ...] = ()
    focus_synonyms: tuple[str, ...] = ()
    focus_type: str = ""


def open_text(path: Path) -> TextIO:
    """Open a text file, transparently decompressing ``.gz``."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def text_lines(path: Path, report: LoadReport, start: int = 1) -> Iterator[tuple[int, str]]:
    """Yield (line number, decoded line); a line that is not valid UTF-8 is skipped and reported, so one
    bad byte costs one row, not the whole file. ``.gz`` files are decompressed transparently."""
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as fh:
        for n, data in enumerate(fh, start=start):
            try:
                yield n, data.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                report.skip(
                    path, n, f"not valid UTF-8 (byte {exc.start + 1} of the line); re-save the file as UTF-8"
                )


def non_string_fields(obj: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    """Fields that are present but not text (a JSON object or list would be stored as its Python repr)."""
    return [
        f"{k} ({type(obj[k]).__name__})"
        for k in fields
        if obj.get(k) is not None and not isinstance(obj[k], str)
    ]


def read_jsonl(path: Path, report: LoadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object); malformed, non-UTF-8 or non-object lines are skipped and reported."""
    for n, line in text_lines(path, report):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            report.skip(path, n, f"malformed JSON ({exc.msg})")
            continue
        if not isinstance(obj, dict):
            report.skip(path, n, "line is not a JSON object")
            continue
        yield n, obj


def read_tsv(
    path: Path, required: tuple[str, ...], report: LoadReport
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row dict) from a headed TSV; a missing column stops with a clear error."""
    with open_text(path) as fh:
        header_line = fh.readline()
        if not header_line:
            raise LoadError(f"{path} is empty: expected a header row with columns {', '.join(required)}.")
        header = header_line.rstrip("\n").split("\t")
        missing = [c for c in required if c not in header]
        if missing:
            raise LoadError(
                f"{path}: missing column(s) {', '.join(missing)} in the header ({', '.join(header)}). "
                f"Fix the header or convert the file to the expected columns: {', '.join(required)}."
            )
        for n, line in enumerate(fh, start=2):
            if not line.strip():
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) < len(header):
                # trailing empty cells are often stripped by editors: pad when only optional ones are gone
                if len(cells) >= max(header.index(c) for c in required) + 1:
                    cells += [""] * (len(header) - len(cells))
                else:
                    report.skip(path, n, f"row has {len(cells)} fields, header has {len(header)}")
                    continue
            yield n, dict(zip(header, cells, strict=False))


class KGLoader(ABC):
    """Reads one knowledge-graph format into entities and relations."""

    format: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    @abstractmethod
    def detect(cls, path: Path) -> bool:
        """True when ``path`` (a file or directory) looks like this format."""

    @abstractmethod
    def load(self, path: Path, report: LoadReport) -> Iterator[Entity | Relation]:
        """Yield entities and relations; skipped rows go to ``report``."""


class CorpusLoader(ABC):
    """Reads one corpus format into :class:`SourceDocument`s."""

    format: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    @abstractmethod
    def detect(cls, path: Path) -> bool:
        """True when ``path`` looks like this format."""

    @abstractmethod
    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        """Yield documents; skipped rows go to ``report``."""


KG_LOADERS: dict[str, type[KGLoader]] = {}
CORPUS_LOADERS: dict[str, type[CorpusLoader]] = {}


def register_kg_loader(cls: type[KGLoader]) -> type[KGLoader]:
    KG_LOADERS[cls.format] = cls
    return cls


def register_corpus_loader(cls: type[CorpusLoader]) -> type[CorpusLoader]:
    CORPUS_LOADERS[cls.format] = cls
    return cls


def _detect(path: Path, registry: dict[str, Any], kind: str, fmt: str | None) -> Any:
    if not path.exists():
        raise LoadError(f"{path} does not exist.")
    if path.is_file() and path.stat().st_size == 0:
        raise LoadError(f"{path} is an empty file: the {kind} is empty, there is nothing to load from it.")
    if fmt is not None:
        if fmt not in registry:
            raise LoadError(f"Unknown {kind} format '{fmt}'. Known formats: {', '.join(sorted(registry))}.")
        return registry[fmt]
    for cls in registry.values():
        if cls.detect(path):
            return cls
    known = "; ".join(f"{k}: {v.description}" for k, v in sorted(registry.items()))
    raise LoadError(f"Cannot tell the {kind} format of {path}. Pass --format. Known formats — {known}.")


def detect_kg_loader(path: Path, fmt: str | None = None) -> KGLoader:
    cls: Callable[[], KGLoader] = _detect(path, KG_LOADERS, "knowledge-graph", fmt)
    return cls()


def detect_corpus_loader(path: Path, fmt: str | None = None) -> CorpusLoader:
    cls: Callable[[], CorpusLoader] = _detect(path, CORPUS_LOADERS, "corpus", fmt)
    return cls()


def first_json_keys(path: Path, max_lines: int = 200) -> set[str]:
    """Keys of the first parseable JSON object in a JSONL file (for format detection).

    Only the first ``max_lines`` lines are tried: every JSONL loader's ``detect`` calls this, and on a file
    that is not JSONL at all (a 1 GB PubMed XML) reading on to the end would cost minutes per loader."""
    try:
        for n, line in text_lines(path, LoadReport()):  # a bad line is skipped here as when loading
            if n > max_lines:
                break
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                return set(obj) if isinstance(obj, dict) else set()
    except (OSError, EOFError):
        return set()
    return set()


def split_pipes(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split("|") if v.strip())
