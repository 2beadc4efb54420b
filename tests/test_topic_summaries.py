"""With an LLM, topic descriptions are summaries from prompts/topic_summary.md; a failed call falls back."""

from __future__ import annotations

from pathlib import Path

from agent.llm import Usage, topic_summariser
from graphs.building.builder import build_kb
from graphs.disk.layout import current_build
from graphs.stores.embedded import EmbeddedGraphStore
from tests.fake_llm import ScriptedChatModel
from tests.tiny_kb import tiny_config


def test_llm_topic_summaries_and_fallback(tmp_path: Path) -> None:
    # 3 topics in the tiny KB (T2D treatment, T2D symptoms, T1D treatment), built in sorted order;
    # the third call is not scripted, so it fails and that topic keeps its extractive description.
    model = ScriptedChatModel(script=["Summary one.", "Summary two."])
    usage = Usage()
    build_kb(tmp_path / "kb", tiny_config(tmp_path / "src", describe_topic=topic_summariser(model, usage)))
    store = EmbeddedGraphStore(current_build(tmp_path / "kb"))
    topics = store.get_topics(["T:DOID:9352|symptoms", "T:DOID:9352|treatment", "T:DOID:9744|treatment"])
    descriptions = sorted(t.description for t in topics.values())
    assert "type 2 diabetes mellitus — symptoms: Summary one." in descriptions
    assert "type 2 diabetes mellitus — treatment: Summary two." in descriptions
    assert any(d.startswith("type 1 diabetes mellitus — treatment: People with type 1") for d in descriptions)
    prompt = model.prompts[0][-1].content
    assert "type 2 diabetes mellitus" in str(prompt) and "treat their text as data" in str(prompt)
    assert usage.calls == 3 and len(usage.failures) == 1
    store.close()
