"""Slack rendering of an answer: Markdown becomes mrkdwn, document text can never ping or link, Slack's
block limits hold, and an insufficient answer says so plainly whatever its text.

Answers here are dicts shaped as the answer node writes them (an LLM-mode answer, which the offline slice
tests in test_slack_bot.py do not produce), so each rule is checked on exactly the input that exercises it.
"""

from __future__ import annotations

from typing import Any

from agent.frontends.slack_render import SECTION_CHARS, answer_blocks, split_sections, to_mrkdwn


def llm_answer(**changes: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "mode": "llm",
        "status": "answered",
        "text": "### First line\n**Metformin** is first-line [E:a1]. It is *usually* tolerated [E:a2, E:a1].",
        "removed_claims": ["An uncited sentence."],
        "sources": [
            {
                "document_id": "d1",
                "title": "Diabetes <!channel>",
                "source": "NIDDK",
                "url": "https://x.org/a?b=1&c=2",
            },
            {"document_id": "d2", "title": "No link", "source": "CDC", "url": "javascript:alert(1)"},
        ],
        "kb_version": "core-1",
        "safety_note": "Decision support only.",
        "warnings": [],
    }
    answer.update(changes)
    return answer


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"]["text"] if "text" in b else b["elements"][0]["text"] for b in blocks]


def test_markdown_becomes_mrkdwn() -> None:
    assert to_mrkdwn("## Dose\n- **bold** and *italic* and __strong__\n* item [site](https://a.org/x)") == (
        "*Dose*\n• *bold* and _italic_ and *strong*\n• item <https://a.org/x|site>"
    )


def test_an_llm_answer_shows_numbered_citations_sources_kb_version_and_the_safety_note() -> None:
    blocks = answer_blocks(llm_answer(), {"E:a1": "Metformin <@U123> is the usual first drug."}, "c-1")
    shown = texts(blocks)
    assert shown[0] == "*First line*\n*Metformin* is first-line [1]. It is _usually_ tolerated [2, 1]."
    assert shown[1] == "1 unsupported claim(s) removed."
    assert shown[2] == (
        "*Citations*\n[1] `E:a1` Metformin &lt;@U123&gt; is the usual first drug.\n[2] `E:a2`"
    )
    assert shown[3] == (
        "*Sources (2)*\n• <https://x.org/a?b=1&amp;c=2|Diabetes &lt;!channel&gt;> — NIDDK\n• No link — CDC"
    )
    assert shown[4:] == ["KB core-1 · llm mode · answered · consult `c-1`", "_Decision support only._"]


def test_an_insufficient_answer_says_so_even_when_its_text_does_not() -> None:
    shown = texts(answer_blocks(llm_answer(status="insufficient", text="Metformin [E:a1]."), {}, "c-2"))
    assert shown[0].startswith("*Insufficient evidence*: the knowledge base did not return enough")
    assert "· insufficient ·" in shown[-2]


def test_long_answers_stay_within_slacks_block_limits() -> None:
    passage = "- " + "word " * 200 + "[E:a1]"
    text = "\n\n".join(f"### Label {i}\n" + "\n".join([passage] * 4) for i in range(30))
    blocks = answer_blocks(llm_answer(text=text), {}, "c-3")
    assert len(blocks) <= 50
    assert all(len(t) <= SECTION_CHARS for t in texts(blocks))
    assert "Answer shortened for Slack; the full text is in consult `c-3`." in texts(blocks)
    assert split_sections("x" * 7000) == ["x" * 2999 + "…", "x" * 2999 + "…", "x" * 1002]
