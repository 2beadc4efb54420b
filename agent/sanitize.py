"""Make text that came from the knowledge base safe to show: one cleaner for every front end.

Passages, titles, URLs and chain names are data written by whoever wrote a document that was added with
``kb add``. Shown raw, a passage could clear a clinician's screen (``ESC[2J``), plant a hidden terminal
hyperlink (OSC 8), reorder what is read with bidi overrides ("Trojan source"), or — in Slack and in a
Markdown export — turn into a link whose target is hidden behind innocent text. Everything the terminal,
Slack, the Markdown/JSON exports and the HTTP API show passes through :func:`clean_text` (control and
escape sequences) and, where the text is read as Markdown, :func:`defuse_markdown` (links, images, HTML).

Why hand-written: the ANSI helpers on PyPI (and ``rich.ansi``) know SGR colours and OSC 8 but not the whole
ECMA-48 grammar (BEL-terminated OSC, DCS/APC strings, 8-bit C1 introducers), and none handles bidi controls;
the control characters are Unicode's ``Cc`` range (fixed by the standard) and the format characters a list.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPE_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?            # CSI … final  (ESC[2J, ESC[31m)
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|$)  # OSC/DCS/SOS/PM/APC … ST or BEL
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                                   # any other ESC sequence (ESC c)
    """,
    re.VERBOSE | re.DOTALL,
)
_BIDI_AND_INVISIBLE = {
    "\u061c",  # Arabic letter mark
    "\u200b",  # zero-width space
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\ufeff",  # byte-order mark / zero-width no-break space
    *(chr(c) for c in range(0x202A, 0x202F)),  # LRE RLE PDF LRO RLO (embeddings and overrides)
    *(chr(c) for c in range(0x2066, 0x206A)),  # LRI RLI FSI PDI (isolates)
}
_LINE_BREAKS = {"\r\n": "\n", "\r": "\n", "\u2028": "\n", "\u2029": "\n\n", "\x85": "\n"}
_MD_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto|javascript|data|file):[^>\s]*)>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<(/?[A-Za-z!?][^>\n]*)>")


_INVISIBLE = "".join(sorted(_BIDI_AND_INVISIBLE))
_NEEDS_CLEANING = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_INVISIBLE}]")
"""Any character :func:`clean_text` changes: the Unicode ``Cc`` controls (C0, DEL and C1, a range the
standard fixes; ESC and CSI, which open every escape sequence, among them), the bidi/invisible set and the
Unicode line separators."""
_DROPPED = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def clean_text(text: str, keep_newlines: bool = True) -> str:
    """``text`` without escape sequences, control characters or bidi/invisible format characters.

    Escape sequences are removed whole (``ESC[2J`` leaves nothing, not ``[2J``); tabs become spaces; line
    breaks of every kind become ``\\n`` (or a space when ``keep_newlines`` is false); any other C0/C1 control
    and DEL is dropped. Printable text, including non-Latin scripts and emoji, is kept as it is.

    Two regular expressions, not a loop over characters: a turn's JSON payload holds ~800 strings and the
    per-character loop cost ~30 ms of a 0.5 s offline turn (evals/bench_consult.py); text with nothing to
    clean, most of it, is returned as it is after one scan.
    """
    if not text:
        return ""
    if not _NEEDS_CLEANING.search(text):
        return text
    for old, new in _LINE_BREAKS.items():
        if old in text:
            text = text.replace(old, new)
    text = _DROPPED.sub("", _ESCAPE_SEQUENCE.sub("", text).replace("\t", " "))
    return text if keep_newlines else text.replace("\n", " ")


def defuse_markdown(text: str, html: bool = True) -> str:
    """Markdown from data shown as what it is: a link or image becomes ``label (url)`` with its target in
    plain sight, an autolink loses its brackets, and an HTML tag is written as text (``&lt;tag>``).

    Applied to whole answer bodies: the answer's own Markdown (headings, bullets, bold, ``[E:…]``
    citations) uses none of these, so only what a document smuggled in is changed. ``html=False`` leaves
    tags alone for a target that escapes ``<`` itself (Slack).
    """
    text = _MD_IMAGE_OR_LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1), text)
    text = _MD_AUTOLINK.sub(r"\1", text)
    return _HTML_TAG.sub(r"&lt;\1>", text) if html else text


def clean_payload(value: Any) -> Any:
    """A JSON-shaped value (an answer, a turn, a trace) with :func:`clean_text` applied to every string,
    keys included, for the JSON front ends (``ask --json``, the HTTP API, ``/export FILE.json``)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_payload(k): clean_payload(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_payload(v) for v in value]
    return value
