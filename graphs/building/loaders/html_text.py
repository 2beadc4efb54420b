"""HTML → plain text for the folder importer, with the stdlib ``html.parser`` (no browser, no dependency).

Why plain text: a passage is cited and shown in a terminal, Slack and a web page; stored HTML would be
markup to sanitise at every front end, and a ``<script>`` in an imported page must never run anywhere.
So scripts, styles and other non-content elements are dropped with their content, block elements become
line breaks, list items ``- `` lines and table cells `` | `` columns; entities are decoded. What remains is
text — an escaped ``&lt;script&gt;`` in the page stays the visible words "<script>", as a reader saw them.
The title is the page's ``<title>``, else its first ``<h1>``.
"""

from __future__ import annotations

from html.parser import HTMLParser

DROPPED = frozenset({"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object"})
BLOCKS = frozenset(
    {
        *("p", "div", "br", "hr", "section", "article", "header", "footer", "main", "aside", "nav", "pre"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "dt", "dd", "blockquote", "address"),
        *("table", "tr", "thead", "tbody", "tfoot", "figure", "figcaption", "form", "fieldset", "details"),
        "summary",
    }
)
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "wbr"})


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.dropped = 0
        self.title = ""
        self.h1 = ""
        self.capture: str | None = None
        self.captured: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.dropped = 0  # a <head> left open ends where the body starts, as in a browser
        if tag in DROPPED and tag not in VOID:
            self.dropped += 1
        if tag in ("title", "h1") and self.capture is None:
            self.capture, self.captured = tag, []
        if tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in DROPPED and self.dropped:
            self.dropped -= 1
        if tag == self.capture:
            text = " ".join("".join(self.captured).split())
            if tag == "title" and not self.title:
                self.title = text
            elif tag == "h1" and not self.h1:
                self.h1 = text
            self.capture = None
        if tag in BLOCKS or tag == "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.capture is not None:
            self.captured.append(data)
        if not self.dropped:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: one line per block, list item or table row."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    text = "\n".join(line.strip(" |") if line.startswith("|") else line for line in lines if line)
    return parser.title or parser.h1, text
