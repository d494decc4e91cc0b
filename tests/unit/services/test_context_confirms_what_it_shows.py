"""A context call confirms from the store only the memories it shows (services/context.py,
through the call's read session, services/reads.py): recall answers from the index's cards unconfirmed, the slots list
from them too, and one batch read of the shown memories known only from cards settles both. A
memory of recall's answer superseded or edited while the projection lags is never shown as its
card holds it, in both languages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from agentmem.domain.context import Mode, SlotName
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.services.context import ContextResult
from support.fake_world import T0, S, World, turn

NOW = T0 + timedelta(days=1)
FACTS = [
    "My dog is called Biscuit.",
    "我的猫叫小白。",
    "I live in Porto.",
    "I'm learning Japanese for a trip to Kyoto.",
    "我每天早上喝一杯乌龙茶。",
    "My sister is a nurse in Lyon.",
    "我周末常去西湖边跑步。",
    "I am allergic to peanuts.",
]


def filled(world: World) -> None:
    for number, fact in enumerate(FACTS):
        world.c.pipeline.ingest(turn(f"m{number}", fact, hours=number * 0.01))
    world.drain()
    world.c.recall.recent_window = 0  # what recall answers is known from cards until confirmed


def build(world: World, query: str) -> ContextResult:
    return world.c.context.build(S, query, mode=Mode.CHAT, now=NOW)


def by_content(world: World, content: str) -> MemoryRecord:
    return next(r for r in world.active() if r.content == content)


def reads(world: World, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    get_many = world.store.get_many

    def spied(scope: Scope, memory_ids: Sequence[str], **kw: Any) -> dict[str, MemoryRecord]:
        calls.append(list(memory_ids))
        return get_many(scope, memory_ids, **kw)

    monkeypatch.setattr(world.store, "get_many", spied)
    return calls


@pytest.mark.parametrize(
    "query", ["What is my dog called?", "我的猫叫什么名字？", "Plan my weekend", "帮我写一段自我介绍"]
)
def test_only_what_is_shown_is_read_in_one_batch(
    world: World, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    filled(world)
    confirmed = replace(world.c.context, index=None)  # the slots from the store
    expected = confirmed.build(S, query, mode=Mode.CHAT, now=NOW).context.text
    calls = reads(world, monkeypatch)
    result = build(world, query)
    assert result.context.text == expected  # the same context as confirming everything
    shown = set(result.context.used_memory_ids)
    assert len(calls) == 1  # recall's memories and the slots' in one batch (none is read ahead)
    assert calls[0] and set(calls[0]) <= shown  # nothing recall answered but the context did not show
    assert set(calls[0]) == {m for m in shown if world.index.cards(S, [m])}  # every shown card, once


@pytest.mark.parametrize(
    ("query", "content", "edited"),
    [
        ("What is my dog called?", "My dog is called Biscuit.", "My dog is called Pepper."),
        ("我的猫叫什么名字？", "我的猫叫小白。", "我的猫叫小黑。"),
    ],
)
def test_a_recalled_memory_changed_while_the_projection_lags_is_shown_as_the_store_holds_it(
    world: World, monkeypatch: pytest.MonkeyPatch, query: str, content: str, edited: str
) -> None:
    filled(world)
    assert content in build(world, query).context.text
    old = by_content(world, content)
    world.store.update(old.evolve(now=T0 + timedelta(hours=2), content=edited), old.version)
    assert world.index.cards(S, [old.memory_id])[old.memory_id].content == content  # the card lags
    asked: list[str] = []
    knn = world.index.knn
    monkeypatch.setattr(world.index, "knn", lambda *a, **kw: asked.append("knn") or knn(*a, **kw))
    text = build(world, query).context.text
    assert edited in text and content not in text
    assert asked == ["knn"]  # the second round scores recall's candidates again; it does not search again


@pytest.mark.parametrize(
    ("query", "content"),
    [("What is my dog called?", "My dog is called Biscuit."), ("我的猫叫什么名字？", "我的猫叫小白。")],
)
def test_a_recalled_memory_superseded_while_the_projection_lags_is_never_shown(
    world: World, query: str, content: str
) -> None:
    filled(world)
    old = by_content(world, content)
    assert old.memory_id in build(world, query).context.used_memory_ids
    world.store.update(old.evolve(now=T0 + timedelta(hours=2), status=Status.SUPERSEDED), old.version)
    result = build(world, query)
    assert content not in result.context.text and old.memory_id not in result.context.used_memory_ids


def test_the_last_round_of_a_time_travel_context_lists_as_of_then(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When recall's shown cards stay out of date until the last round, the store lists the slots:
    as of the context's time, superseded memories valid then included."""
    from agentmem.services import context as context_module
    from agentmem.services.reads import ReadSession

    filled(world)
    monkeypatch.setattr(context_module, "CONFIRM_ROUNDS", 1)
    confirm, calls = ReadSession.confirm, []

    def first_out_of_date(self: ReadSession, memory_ids: Any, **kw: Any) -> set[str]:
        calls.append(1)
        stale = confirm(self, memory_ids, **kw)
        return stale if len(calls) > 1 else stale | {"out of date"}

    monkeypatch.setattr(ReadSession, "confirm", first_out_of_date)
    statuses: list[Any] = []
    listing = world.store.list

    def spied(scope: Scope, **kw: Any) -> Any:
        statuses.append(tuple(kw.get("statuses") or ()))
        return listing(scope, **kw)

    monkeypatch.setattr(world.store, "list", spied)
    world.c.context.build(S, "What is my dog called?", mode=Mode.CHAT, now=NOW, as_of=NOW)
    assert calls and statuses and all(Status.SUPERSEDED in s for s in statuses)


@pytest.mark.parametrize(
    ("query", "suffix"), [("What is my dog called?", " (corrected)"), ("我周末做什么好？", "（已更正）")]
)
def test_a_card_that_drifted_from_the_store_at_the_same_version_is_shown_as_the_store_holds_it(
    world: World, query: str, suffix: str
) -> None:
    """A card and the store's copy of one version that differ (a rewrite that kept the version, a
    restore: what the reconciler repairs later) are told apart by the content hash: every memory
    shown, recall's and the profile slot's alike, is shown as the store holds it."""
    filled(world)
    slots = {slot.name: [item.memory_id for item in slot.items] for slot in build(world, query).context.slots}
    assert slots[SlotName.PROFILE] and slots[SlotName.RECALL]  # both kinds of shown memory
    edited: dict[str, str] = {}
    for memory_id in [*slots[SlotName.PROFILE], *slots[SlotName.RECALL]]:
        old = world.store.get(S, memory_id)
        assert old is not None
        drifted = replace(old, content=old.content + suffix, content_hash="")  # the hash recomputed
        world.store.update(drifted, old.version)  # the same version, other content
        card = world.index.cards(S, [memory_id])[memory_id]
        assert (card.version, card.content) == (old.version, old.content)  # the card drifted
        edited[memory_id] = drifted.content
    text = build(world, query).context.text
    for content in edited.values():
        assert content in text


@pytest.mark.parametrize("content", ["I live in Porto.", "我的猫叫小白。"])
def test_both_confirmations_tell_a_drifted_card_by_its_content_hash(world: World, content: str) -> None:
    """The one confirmation (services/reads.py), for a card recall read and for a card the slots
    listed alike: a store copy of the card's version with other content does not confirm it; the
    card itself does."""
    from agentmem.services.reads import ReadSession

    filled(world)
    card = by_content(world, content)
    drifted = replace(card, content=content + "!", content_hash="")
    assert drifted.version == card.version and drifted.content_hash != card.content_hash
    for noted in ("recall", "listing"):
        for found, stale in ((card, set()), (drifted, {card.memory_id})):
            reads = ReadSession(world.store, world.index, S)
            if noted == "recall":
                assert reads.light([card.memory_id]) and reads.is_card(card.memory_id)
            else:
                reads.carded([card])
            assert reads.check([card.memory_id], {card.memory_id: found}) == stale
