"""A question comparing two things shows a sentence on each (agent/nodes/comparison.py).

"How is Crohn's disease different from ulcerative colitis?" was answered with Crohn's sentences only.
"""

from __future__ import annotations

from agent.nodes.comparison import compared_subjects, covering_each_subject
from agent.nodes.focus import Focus
from agent.nodes.reading import ReadSentence

CROHN = {"id": "DOID:8778", "name": "Crohn's disease", "type": "Disease"}
UC = {"id": "DOID:8577", "name": "ulcerative colitis", "type": "Disease"}
FOCUS = Focus(
    [CROHN, UC],  # type: ignore[list-item]
    [],
    {"DOID:8778": ["Crohn's disease", "Crohn disease"], "DOID:8577": ["ulcerative colitis", "UC"]},
)


def read(text: str, score: float) -> ReadSentence:
    return ReadSentence("E:1", text, 0, len(text), 0, score, 0.5, score, "overview")


def test_only_a_question_comparing_two_named_subjects_asks_for_both() -> None:
    assert len(compared_subjects("How is Crohn's disease different from ulcerative colitis?", FOCUS)) == 2
    assert len(compared_subjects("Crohn's disease vs ulcerative colitis: which is more common?", FOCUS)) == 2
    assert compared_subjects("How is Crohn's disease treated?", FOCUS) == []
    one = Focus([CROHN], [], {"DOID:8778": ["Crohn's disease"]})  # type: ignore[list-item]
    assert compared_subjects("How is Crohn's disease different from other diseases?", one) == []


def test_a_subject_no_picked_sentence_names_gets_its_best_sentence_in_place_of_the_last() -> None:
    subjects = [
        p for _, p in compared_subjects("How is Crohn's disease different from ulcerative colitis?", FOCUS)
    ]
    first = read("Crohn's disease can affect any part of the digestive tract.", 3.0)
    second = read("Crohn's disease often causes pain in the lower right abdomen.", 2.5)
    third = read("People with Crohn's disease may lose weight.", 2.0)
    other = read("Ulcerative colitis affects only the colon and the rectum.", 1.0)
    weak = read("Ulcerative colitis is named for its ulcers.", -9.0)
    shown = [first, second, third, other, weak]
    assert covering_each_subject([first, second, third], shown, subjects, lambda r: r.score > -4) == [
        first,
        second,
        other,
    ]
    # Nothing the reader would show names it: the answer is left as it is, never made up.
    assert covering_each_subject(
        [first, second], [first, second, weak], subjects, lambda r: r.score > -4
    ) == [
        first,
        second,
    ]
    # One sentence picked: the other subject's sentence is added after it.
    assert covering_each_subject([first], shown, subjects, lambda r: True) == [first, other]


def test_a_subject_no_read_passage_names_has_its_best_passage_read() -> None:
    from agent.nodes.comparison import with_each_subject_read

    subjects = [
        p for _, p in compared_subjects("How is Crohn's disease different from ulcerative colitis?", FOCUS)
    ]
    crohn = [{"id": f"E:{i}", "text": "Crohn's disease affects the small intestine."} for i in range(8)]
    uc = {"id": "E:uc", "text": "Ulcerative colitis affects the colon."}
    ordered = with_each_subject_read([*crohn, uc], subjects, 6)  # type: ignore[list-item]
    assert [e["id"] for e in ordered[:6]] == ["E:0", "E:1", "E:2", "E:3", "E:4", "E:uc"]
    assert len(ordered) == 9
    # Already read: nothing moves.
    assert with_each_subject_read([uc, *crohn], subjects, 6)[0] is uc  # type: ignore[list-item]
