"""The policy category by construction (issue 37): only a grant makes a policy, only the
permission *and* the stated category make a grant, and the classifier never says ``policy``."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmem.domain.authority import (
    INSTRUCTION_MARK,
    PolicyGrant,
    PolicyNotGranted,
    conversational_category,
    grant_policy,
    is_instruction,
    written_category,
)
from agentmem.domain.classify import classify
from agentmem.domain.models import Category, MemoryRecord, Scope, Source, Status

LIBRARY = Path(__file__).resolve().parents[2] / "layers" / "agentmem"
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def test_a_grant_needs_the_permission_and_the_stated_category() -> None:
    assert grant_policy(True, Category.POLICY) is not None
    assert grant_policy(False, Category.POLICY) is None
    assert grant_policy(True, None) is None
    assert grant_policy(True, Category.PREFERENCE) is None


def test_a_grant_cannot_be_built_by_hand() -> None:
    with pytest.raises(TypeError):
        PolicyGrant(object())


def test_written_category_makes_a_policy_only_from_a_grant() -> None:
    grant = grant_policy(True, Category.POLICY)
    assert written_category(Category.POLICY, Category.FACT, grant) == (Category.POLICY, INSTRUCTION_MARK)
    with pytest.raises(PolicyNotGranted):
        written_category(Category.POLICY, Category.FACT, None)
    # a grant does not turn another stated or an inferred category into a policy
    assert written_category(None, Category.PREFERENCE, grant) == (Category.PREFERENCE, None)
    assert written_category(Category.FACT, Category.PREFERENCE, grant) == (Category.FACT, None)


@given(st.text(max_size=200), st.one_of(st.none(), st.sampled_from([c.value for c in Category])))
def test_the_classifier_never_says_policy(text: str, hint: str | None) -> None:
    assert classify(text, hint) is not Category.POLICY


@pytest.mark.parametrize("category", list(Category))
def test_conversational_category_is_never_policy(category: Category) -> None:
    assert conversational_category(category) is not Category.POLICY


def _record(**changes: object) -> MemoryRecord:
    base: dict[str, object] = {
        "scope": Scope("t", "u"),
        "memory_id": "m1",
        "content": "Quote prices in EUR",
        "category": Category.POLICY,
        "source": Source.EXPLICIT,
        "slot_hint": INSTRUCTION_MARK,
        "created_at": T0,
    }
    return MemoryRecord(**{**base, **changes})  # type: ignore[arg-type]


def test_an_instruction_needs_the_mark_an_authorised_source_and_to_be_active() -> None:
    assert is_instruction(_record())
    assert not is_instruction(_record(slot_hint=None))  # the classifier's policy of older versions
    assert not is_instruction(_record(source=Source.USER))
    assert not is_instruction(_record(source=Source.CONSOLIDATION))
    assert not is_instruction(_record(status=Status.SUPERSEDED))
    assert not is_instruction(_record(category=Category.PREFERENCE))


def test_only_authority_names_the_instruction_mark() -> None:
    """Derived from the code: no module but the authority one sets a ``slot_hint`` (the mark a
    granted policy carries), so no other path can make a record an instruction."""
    setters = []
    for path in LIBRARY.rglob("*.py"):
        if path.name == "authority.py" or "adapters" in path.parts:  # adapters only round-trip fields
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "slot_hint":
                value = node.value
                from_written = isinstance(value, ast.Attribute) and value.attr == "slot_hint"
                if not from_written:
                    setters.append(f"{path.relative_to(LIBRARY)}:{node.lineno}")
    assert setters == []
