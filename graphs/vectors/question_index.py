"""The dense question index: one vector per document that answers a question, for the question itself.

Why: a MedQuAD document is the answer to one question (its title, "What are the treatments for Gout ?"),
and a consumer's question ("my dad has gout, what can he take for the pain?") is closer to that question
than to the answer's text, whose vector mixes the title with a long passage (question entailment, the
LiveQA-2017 line of work over MedQuAD). BM25 over the same titles did not help (their shared words are the
template, "What are the treatments for"); the encoder compares meaning and did: medquad-consumer recall@10
0.701 → 0.741 and success@1 0.556 → 0.611 at the chosen weight (tools/fusion.py, evals/reports/README.md).

Only titles written as a question are indexed: a BioASQ or PubMedQA title ("PubMed 12345") answers no
question, so those KBs get an empty collection and evidence_rank's fusion gives the signal no weight.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

QUESTIONS_COLLECTION = "questions"
"""Vector collection: document id → embedding of the question the document answers."""
BUILT_WITHOUT_IT = (
    "This KB was built before the question index: questions are matched by their passages only. "
    "Run `evigraph kb build` to add it."
)
"""The warning of a KB whose manifest counts no questions (built before this index existed)."""


QUESTION_OPENING = re.compile(
    r"^(?:what|how|why|when|where|who|which|whom|whose|is|are|was|were|"
    r"does|do|did|can|could|should|will|would|may)\s+\S+\s+\S+",
    re.IGNORECASE,
)
"""How a question opens when its question mark is left off: MedQuAD's MedlinePlus health topics all read
"Do you have information about Cancer Chemotherapy" (295 of its 981 documents in the default KB); the rule
asks for two more words after the opening, so a title such as "What Next" or "Is" is not one."""


def is_question(title: str) -> bool:
    """A title written as a question (MedQuAD: "What are the symptoms of X ?"; with the question mark left
    off, ``QUESTION_OPENING``).

    Why the opening counts: a document left out of this index scores 0 on the dense question match, which
    carries 0.3 of the fused score on a consumer KB (tools/fusion.py). "Do you have information about Cancer
    Chemotherapy" — word for word its own MedlinePlus page's title — ranked that page 229th of 284
    candidates, below every CancerGov "What are the treatments for … Cancer ?" page, and the answer was
    "insufficient"."""
    text = title.strip()
    return text.endswith("?") or QUESTION_OPENING.match(text) is not None


def question_items(titles: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(document id, question) for each (document id, title) whose title is a question."""
    return [(str(doc_id), str(title).strip()) for doc_id, title in titles if is_question(str(title))]
