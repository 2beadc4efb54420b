"""Shared pieces of the XML importers: open (``.gz`` too), sniff the root element, stream with error reports.

Why ``xml.etree.ElementTree.iterparse`` (stdlib expat) and not lxml: lxml is not installed and a PubMed
baseline file is read start to end once, which iterparse does in constant memory when each record is
cleared after use. Expat never fetches the external DTD a PubMed file names and refuses entity-expansion
bombs (expat ≥ 2.4), so an imported file cannot make the importer read other files or the network.

A file that breaks off (truncated download, invalid XML) is not an exception for the user: the records read
before the break are kept and the break is reported with file, line and column.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast
from xml.etree import ElementTree as ET

from graphs.building.loaders.base import LoadReport

HEAD_BYTES = 64 * 1024
_FIRST_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")
_SKIPPED_PROLOG = re.compile(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>", re.S)


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it ends in ``.gz``."""
    return cast(IO[bytes], gzip.open(path, "rb")) if path.suffix == ".gz" else path.open("rb")


def head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes (decompressed), or as many as could be read before a damaged part."""
    data = bytearray()
    try:
        with open_binary(path) as fh:
            while len(data) < size and (chunk := fh.read(min(8192, size - len(data)))):
                data += chunk
    except (OSError, EOFError, zlib.error):
        pass  # a truncated .gz still shows its first bytes
    return bytes(data)


def root_tag(data: bytes) -> str:
    """Name of the first element in ``data`` (after the XML declaration, comments and DOCTYPE), or ``""``."""
    body = _SKIPPED_PROLOG.sub(b"", data.lstrip(b"\xef\xbb\xbf \t\r\n"))
    match = _FIRST_TAG.search(body)
    if not match or body[: match.start()].strip():
        return ""
    return match.group(1).decode("ascii", "replace").rsplit(":", 1)[-1]


def local(tag: str) -> str:
    """Element name without its ``{namespace}``."""
    return tag.rsplit("}", 1)[-1]


def inline(element: ET.Element | None) -> str:
    """All text under ``element`` with whitespace collapsed (inline markup such as ``<sub>`` kept as text)."""
    if element is None:
        return ""
    return " ".join("".join(element.itertext()).split())


def events(path: Path, report: LoadReport, what: str) -> Iterator[tuple[str, ET.Element]]:
    """``iterparse`` start/end events of ``path``; a parse error or a damaged ``.gz`` ends the stream with
    one report line (file, line, column) instead of an exception. ``what`` names the records for that line
    ("articles", "sections")."""
    try:
        with open_binary(path) as fh:
            yield from ET.iterparse(fh, events=("start", "end"))
    except ET.ParseError as exc:
        line, column = getattr(exc, "position", (0, 0))
        reason = re.sub(r": line \d+, column \d+$", "", str(exc))
        report.skip(
            path,
            line,
            f"the XML breaks here (column {column}: {reason}); the {what} before it were read, the rest "
            "of the file was not",
        )
    except (OSError, EOFError, zlib.error) as exc:
        report.skip(path, 0, f"the file cannot be read to its end ({exc}); the {what} before it were read")
