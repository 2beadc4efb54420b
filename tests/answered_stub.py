"""An "answered" model that answers everything: with it, only the checks after the model (the asked detail,
the asked term) stand between a question and an "answered", so a test can show what each check stops."""

from __future__ import annotations

from agent.nodes import answered
from agent.nodes.answered import AnsweredModel


def answers_everything() -> AnsweredModel:
    return AnsweredModel(
        features=answered.FEATURES,
        means=(0.0,) * len(answered.FEATURES),
        scales=(1.0,) * len(answered.FEATURES),
        weights=(0.0,) * len(answered.FEATURES),
        bias=10.0,
        threshold=0.5,
    )
