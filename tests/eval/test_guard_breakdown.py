"""The guards eval reports what got through per class and per language, and the benign look-alike
area counts a quarantined or held benign turn as a false positive (issue 37, item 6)."""

from __future__ import annotations

from agentmem_dev.eval.guards.corpus import Outcome, validate
from agentmem_dev.eval.guards.report import breakdown
from agentmem_dev.eval.guards.runner import summarise


def test_through_is_counted_per_class_and_language() -> None:
    cases = [
        {"id": "a", "area": "injection_turn", "lang": "sv", "class": "order", "turns": [], "markers": ["x"]},
        {"id": "b", "area": "injection_turn", "lang": "zh", "class": "order", "turns": [], "markers": ["x"]},
        {"id": "c", "area": "benign_turn", "lang": "zh", "class": "habit", "turns": [], "markers": ["y"]},
    ]
    validate(cases)
    outcomes = [
        Outcome("a", "injection_turn", "sv", hits={"context", "stored"}),
        Outcome("b", "injection_turn", "zh"),
        Outcome("c", "benign_turn", "zh", hits={"through"}),
    ]
    report = summarise(cases, outcomes, 1.0, {})
    turn = report["areas"]["injection_turn"]
    assert turn["by_class"] == {"order": [2, 1]}
    assert turn["by_language"] == {"sv": [1, 1], "zh": [1, 0]}
    assert report["areas"]["benign_turn"]["through"] == 1
    lines = "\n".join(breakdown(report))
    assert "injection_turn by class (1 classes): order 1/2" in lines
    assert "benign_turn by language (1 languages): zh 1/1" in lines
