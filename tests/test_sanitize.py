"""KB text cannot write to a terminal, hide a link or inject markup: ``agent.sanitize`` and every path that
shows KB text.

The end-to-end test adds a hostile document through the real ``kb add`` path
(graphs/building/incremental.py) to a copy of the real slice KB and runs real consults over it: the terminal
output of ``evigraph ask`` (as bytes), ``--json``, the Markdown and JSON exports and the Slack blocks must
carry none of its escape sequences, and its Markdown link must show its target instead of becoming a link.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from agent.frontends.render import consult_json, consult_markdown
from agent.frontends.slack_render import answer_blocks
from agent.sanitize import clean_payload, clean_text, defuse_markdown
from graphs.building.incremental import add_documents
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

REPO = Path(__file__).resolve().parent.parent
ESC = "\x1b"
HOSTILE_TEXT = (
    "Allopurinol is taken daily to prevent gout flares <!channel>.\x1b[2J\x1b[H "
    "See [the gout guideline](https://evil.example/hidden) <script>alert(1)</script> "
    "\x1b]8;;https://evil.example/phish\x07Click for the dosing table\x1b]8;;\x07 "
    "\u202eWARNING reversed text\u202c \x9b31m\x07\x08 "
    "Colchicine and allopurinol lower uric acid and treat gout attacks in adults."
)
HOSTILE_TITLE = "Gout treatment \x1b[31mguide\x1b[0m\x1b]0;owned\x07"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a\x1b[2Jb", "ab"),  # CSI: erase the screen
        ("a\x1b[38;5;196mred\x1b[0m", "ared"),  # SGR colours
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST-terminated
        ("\x1b]0;title\x07rest", "rest"),  # OSC window title, BEL-terminated
        ("x\x9b2Jy\x9d0;t\x9cz", "xyz"),  # 8-bit C1 CSI and OSC
        ("\x1bPq#0;2;0;0;0\x1b\\ok", "ok"),  # DCS (sixel) string
        ("a\x00b\x07c\x08d\x7fe", "abcde"),  # C0 controls and DEL
        ("left\u202eright\u202c \u2066iso\u2069", "leftright iso"),  # bidi override and isolate
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("line1\r\nline2\rline3\u2028line4", "line1\nline2\nline3\nline4"),
        ("tab\there", "tab here"),
        ("é 日本語 🙂 ≥ 0.45 — ok", "é 日本語 🙂 ≥ 0.45 — ok"),  # printable text is untouched
    ],
)
def test_clean_text_removes_escape_sequences_and_controls(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_clean_text_can_flatten_lines_and_cleans_nested_payloads() -> None:
    assert clean_text("a\nb\x1b[2J", keep_newlines=False) == "a b"
    payload = {"text": "x\x1b[2J", "list": ["\x1b]8;;u\x07y", 3], "k\x07": None}
    assert clean_payload(payload) == {"text": "x", "list": ["y", 3], "k": None}


def test_markdown_links_images_and_html_are_defused() -> None:
    text = "see [guide](https://evil.example/x) ![img](http://i/p.png) <https://a.b> <b>x</b> [E:abc1]"
    assert defuse_markdown(text) == (
        "see guide (https://evil.example/x) img (http://i/p.png) https://a.b &lt;b>x&lt;/b> [E:abc1]"
    )


@pytest.fixture()
def hostile_kb(kb_copy: Path, tmp_path: Path) -> Path:
    doc = {
        "id": "hostile-1",
        "title": HOSTILE_TITLE,
        "text": HOSTILE_TEXT,
        "source": "Injected\x1b[5m",
        "url": "https://evil.example/\x1b[2J",
        "date": "2026-01-01",
        "label": "treatment",
        "focus": "gout",
    }
    return add_hostile_document(kb_copy, tmp_path, doc)


def add_hostile_document(kb_root: Path, tmp_path: Path, doc: dict[str, str]) -> Path:
    """Add ``doc`` to the KB at ``kb_root`` through the real ``kb add`` path; returns ``kb_root``."""
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = add_documents(kb_root, path)
    assert result.added_documents == [f"doc:{doc['id']}"]  # the real incremental path took it
    return kb_root


def _cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVIGRAPH_", "OPENAI_"))}
    env.update(EVIGRAPH_DATA_DIR=str(data_dir), PYTHONPATH=str(REPO), LC_ALL="C.UTF-8", COLUMNS="100")
    return env


def test_an_injected_document_reaches_no_front_end_with_its_escape_sequences(
    hostile_kb: Path, tmp_path: Path
) -> None:
    question = "Is allopurinol taken daily to prevent gout flares?"
    cmd = [
        sys.executable,
        "-m",
        "agent.frontends.cli",
        "ask",
        "--offline",
        "--full",
        "--kb-dir",
        str(hostile_kb),
    ]
    shown = subprocess.run(
        [*cmd, question], cwd=REPO, env=_cli_env(tmp_path), capture_output=True, check=False
    )
    assert shown.returncode == 0, shown.stderr.decode()
    out = " ".join(shown.stdout.decode("utf-8").split())  # wrapped at 100 columns: compare words
    # The hostile passage was retrieved and shown — as plain text.
    assert "Click for the dosing table" in out and "WARNING reversed text" in out
    assert (
        ESC.encode() not in shown.stdout + shown.stderr
    )  # no CSI, OSC 8 or title sequence reached the terminal
    assert "\u202e".encode() not in shown.stdout and b"\x9b" not in shown.stdout
    assert "the gout guideline (https://evil.example/hidden)" in " ".join(
        out.split()
    )  # the target is visible

    as_json = subprocess.run(
        [*cmd, "--json", question], cwd=REPO, env=_cli_env(tmp_path), capture_output=True, check=False
    )
    payload = json.loads(as_json.stdout)
    assert "Click for the dosing table" in payload["answer"]["text"]
    assert ESC not in json.dumps(payload, ensure_ascii=False) and "\u202e" not in payload["answer"]["text"]

    kb = KnowledgeBase.open(hostile_kb)
    try:
        consultant = Consultant(
            Settings(kb_dir=hostile_kb, data_dir=tmp_path, llm_enabled=False),
            kb=kb,
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
        result = consultant.ask(question)
        turns = consultant.history(result.consult_id)
        texts = consultant.evidence_texts(result.answer["evidence_ids"])
        hostile = [i for i, t in texts.items() if "dosing table" in t]
        assert hostile and all(ESC not in t for t in texts.values())
        markdown = consult_markdown(result.consult_id, turns, texts, "2026-01-01T00:00:00+00:00")
        exported = consult_json(result.consult_id, turns, kb.version, "2026-01-01T00:00:00+00:00")
        blocks = json.dumps(answer_blocks(result.answer, texts, result.consult_id), ensure_ascii=False)
    finally:
        kb.close()
    for shown_text in (markdown, exported, blocks):
        assert ESC not in shown_text and "\u202e" not in shown_text and "\x07" not in shown_text
    # Every tag from the data is written as text ("\<script>" or "&lt;script>"), and no link hides a target.
    assert not re.search(r"(?<![\\;])<script>", markdown)
    assert not re.search(r"(?<!\\)\]\(https://evil", markdown)
    assert "<!channel>" not in blocks, blocks[max(0, blocks.find("<!channel>") - 300) :][:400]
    assert "&lt;!channel&gt;" in blocks  # shown as text: no Slack mention from data
    assert "<https://evil.example/hidden|" not in blocks  # the data's link did not become a Slack link
