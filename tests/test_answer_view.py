"""How an answer reads in the terminal: compact by default, snippets cut on words, chain citations with their
text, only cited sources, warnings shown, one bullet per item — on real consults over the slice KB and on
answers shaped as the answer node writes them."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from agent.consult import Consultant
from agent.frontends.answer_view import compact_body, short_answer, shorten, single_bullets
from agent.frontends.render import consult_markdown, print_answer

LONG = (
    "Insulin therapy is needed when diet and oral medicines no longer keep blood glucose in the target range "
    "for most adults with long-standing diabetes."
)


def shown(answer: dict[str, Any], evidence: dict[str, str] | None = None, full: bool = False) -> str:
    buffer = io.StringIO()
    print_answer(Console(file=buffer, width=100, color_system=None), answer, evidence or {}, full=full)
    return buffer.getvalue()


def answer_of(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "text": text,
        "status": "answered",
        "mode": "offline",
        "kb_version": "slice-x",
        "safety_note": "Decision support only.",
        "sources": [
            {
                "document_id": "d1",
                "title": "Diabetes treatments",
                "source": "MedQuAD/NIDDK",
                "url": "https://a",
            },
            {"document_id": "d2", "title": "Uncited page", "source": "MedQuAD/CDC", "url": "https://b"},
        ],
        "evidence_documents": {"E:aaa111": "d1", "E:bbb222": "d2"},
        "chain_texts": {"C:ccc333": "metformin -treats-> type 2 diabetes"},
        **extra,
    }


def test_shorten_cuts_on_a_word_boundary_with_an_ellipsis() -> None:
    cut = shorten(LONG, 60)
    assert cut.endswith("…") and len(cut) <= 60
    assert LONG.startswith(cut[:-1]) and LONG[len(cut) - 1] == " "  # the cut fell between two words
    assert shorten("short text", 60) == "short text"


def test_doubled_bullets_collapse_to_one() -> None:
    assert (
        single_bullets("- - Fatigue - Weight gain [E:a1]\n-   •  x") == "- Fatigue - Weight gain [E:a1]\n- x"
    )


def test_chain_citations_show_their_text_and_only_cited_sources_are_listed() -> None:
    text = f"**Label**\n\n### Treatment\n- {LONG} [E:aaa111]\n\n### Knowledge-graph chains\n- m [C:ccc333]"
    out = shown(answer_of(text, warnings=["input truncated from 9,000 to 6,000 characters"]), full=True)
    assert "[2] C:ccc333  metformin -treats-> type 2 diabetes" in out
    assert "Diabetes treatments" in out and "Uncited page" not in out and "sources cited (1)" in out
    assert "⚠ input truncated from 9,000 to 6,000 characters" in out


def test_the_compact_view_keeps_the_lead_and_few_passages_and_full_shows_all() -> None:
    passages = "\n".join(f"- Passage {i} about diabetes. {LONG} {LONG} [E:p{i}]" for i in range(6))
    text = f"**Label**\n\nLead statement [E:aaa111]\n\n### Treatment\n{passages}\n\n### Overview\n{passages}"
    body, hidden = compact_body(text, None)
    assert hidden == 0 and body.count("Passage") == 12
    compact = shown(answer_of(text))
    full = shown(answer_of(text), full=True)
    assert "Lead statement" in compact and "Passage 0" in compact and "Passage 5" not in compact
    assert "more passage(s)" in compact and "/more" in compact
    assert "Passage 5" in full and len(full.splitlines()) > len(compact.splitlines())


def test_short_answer_is_one_line_with_the_status() -> None:
    recap = short_answer(answer_of(f"**Retrieved evidence (offline)**\n\n### Treatment\n- {LONG} [E:aaa111]"))
    assert recap.startswith("answered · Insulin therapy") and "[E:" not in recap and "\n" not in recap


def test_a_real_consult_is_compact_with_chain_text_and_cited_sources_only(consultant: Consultant) -> None:
    # Not "Is allopurinol used to treat gout?": the slice KG lists no allopurinol for gout, and a yes/no
    # question's KG facts are shown only when they name the drug asked about (asked_intervention.py).
    result = consultant.ask("Which drugs treat gout?")
    evidence = consultant.evidence_texts(result.answer["evidence_ids"])
    compact, full = shown(result.answer, evidence), shown(result.answer, evidence, full=True)
    assert len(compact.splitlines()) < len(full.splitlines())
    chains = {cid: text for cid, text in result.answer["chain_texts"].items() if cid in result.answer["text"]}
    assert chains  # the direct answer cites KG facts
    full_panel = full.split("citations", 1)[1]
    for cid, text in chains.items():  # each [C:…] reads as its chain: compact by its text, full with its id
        assert f"{cid}  {text[:40]}" in full_panel
        assert re.search(r"\[\d+\] " + re.escape(text[:20]), compact.split("citations", 1)[1])
    cited_docs = {result.answer["evidence_documents"][e] for e in result.answer["evidence_ids"]}
    assert len(result.answer["sources"]) == len(cited_docs)  # offline: every kept passage is cited
    markdown = consult_markdown(result.consult_id, result.turns, evidence, "2026-01-01T00:00:00+00:00")
    cites = markdown.split("### Citations", 1)[1]
    for cid in re.findall(r"`(C:[0-9a-f]+)`", cites) or pytest.fail("no chain cited in the export"):
        assert f"`{cid}` {result.answer['chain_texts'][cid].replace('_', chr(92) + '_')}" in cites
    assert "- - " not in markdown and "•  •" not in full


def test_sources_carry_the_answers_own_numbers_one_line_per_page_and_chains_wrap_at_60_columns(
    consultant: Consultant,
) -> None:
    """Issue 22: `/sources` numbered 1–7 while the answer cited [9]–[13] and listed one fact sheet five
    times; a chain citation was cut mid-word ("type 2 diab…") when the output was 80 columns wide."""
    from agent.frontends.answer_view import answer_view
    from agent.frontends.render import number_citations, sources_renderable

    answer = consultant.ask("Which drugs treat gout?").answer
    buffer = io.StringIO()
    narrow = Console(file=buffer, width=60, color_system=None)
    print_answer(narrow, answer, {})
    panel = buffer.getvalue().split("citations", 1)[1].split("KB ", 1)[0]
    assert "…" not in panel, panel  # wrapped, never cut
    words = set(re.findall(r"\S+", panel.replace("│", " ")))
    _, order = number_citations(answer_view(answer, {}, False)[0])
    chains = [answer["chain_texts"][cid] for cid in order if cid.startswith("C:")]
    assert chains
    for text in chains:
        assert set(text.split()) <= words, (text, panel)
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(sources_renderable(answer))
    table = buffer.getvalue()
    passages = [(n, cid) for n, cid in enumerate(order, 1) if cid.startswith("E:")]
    assert passages
    for n, cid in passages:
        assert f"[{n}]" in table, (n, cid, table)
    urls = [s["url"] for s in answer["sources"] if s.get("url")]
    for url in set(urls):
        assert table.count(url) == 1, url


def test_the_citation_panel_lists_numbers_in_order_when_a_passage_is_cited_before_the_chains() -> None:
    """Seen in the newcomer trial: an insufficient answer quoting passage [1] before KG facts [2][3] showed
    the chains' row first, so the panel read [2] [3] [1]."""
    text = "Best sentence [E:aaa111].\n- **Drugs:** metformin [C:ccc333][C:ddd444]"
    answer = answer_of(
        text,
        chain_texts={"C:ccc333": "metformin -treats-> type 2 diabetes", "C:ddd444": "metformin -x-> y"},
    )
    panel = shown(answer).split("citations", 1)[1]
    assert panel.index("[1]") < panel.index("[2]") < panel.index("[3]"), panel
