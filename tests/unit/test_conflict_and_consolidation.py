"""Conflict judgement (lean to keeping both) and the pure consolidation planner (decay, dedup,
merge, evict — never touching protected memories, never crossing users)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.conflict import Judgement, NewFact, judge, judge_update
from agentmem.domain.consolidation import ConsolidationConfig, Plan, plan
from agentmem.domain.models import Category, Layer, MemoryRecord, Scope, Status
from agentmem.domain.scoring import Scorer
from agentmem.domain.similarity import SimilarityThresholds

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SCOPE = Scope("t1", "u1")
TH = SimilarityThresholds()


def rec(
    memory_id: str,
    content: str = "",
    *,
    category: Category = Category.FACT,
    key: str | None = None,
    value: str | None = None,
    importance: float = 0.5,
    age_days: float = 0.0,
    now: datetime = T0,
    scope: Scope = SCOPE,
    **changes: object,
) -> MemoryRecord:
    at = now - timedelta(days=age_days)
    record = MemoryRecord(
        scope=scope,
        memory_id=memory_id,
        content=content or f"memory {memory_id}",
        category=category,
        key=key,
        value=value,
        importance=importance,
        created_at=at,
        updated_at=at,
    )
    return replace(record, **changes) if changes else record


def fact(
    content: str, category: Category, key: str | None = None, value: str | None = None, update: bool = False
) -> NewFact:
    return NewFact(content, category, key, value, update)


# ---------------------------------------------------------------------------- judge


def test_same_single_valued_key_with_another_value_supersedes() -> None:
    old = rec("A", "我住在成都", category=Category.IDENTITY, key="residence", value="成都")
    new = fact("我搬到重庆了", Category.IDENTITY, "residence", "重庆", update=2)
    assert judge(new, old, 0.1, TH) is Judgement.SUPERSEDE  # wording may differ completely
    en_old = rec(
        "B", "My manager is Priya Sharma.", category=Category.IDENTITY, key="manager", value="Priya Sharma"
    )
    en_new = fact("My new boss is Tom Okafor.", Category.IDENTITY, "manager", "Tom Okafor")
    assert judge(en_new, en_old, 0.3, TH) is Judgement.SUPERSEDE


def test_same_key_same_value_is_a_duplicate() -> None:
    old = rec("A", "I live in Porto.", category=Category.IDENTITY, key="residence", value="Porto")
    assert (
        judge(fact("These days I live in porto", Category.IDENTITY, "residence", "porto"), old, 0.2, TH)
        is Judgement.DUPLICATE
    )
    assert (
        judge(
            fact("I'm allergic to PEANUTS", Category.PREFERENCE, "allergy", "Peanuts"),
            rec("B", "allergic to peanuts", category=Category.PREFERENCE, key="allergy", value="peanuts"),
            0.1,
            TH,
        )
        is Judgement.DUPLICATE
    )


@pytest.mark.parametrize("similarity", [0.1, 0.5, 0.76, 0.85])
def test_multi_valued_key_with_another_value_keeps_both(similarity: float) -> None:
    old = rec("A", "我对花生过敏", category=Category.PREFERENCE, key="allergy", value="花生")
    new = fact("我对芒果过敏", Category.PREFERENCE, "allergy", "芒果")
    assert judge(new, old, similarity, TH) is Judgement.KEEP_BOTH


@pytest.mark.parametrize("similarity", [0.5, 0.8, 0.9])
def test_episodic_memories_never_conflict(similarity: float) -> None:
    old = rec("A", "Yesterday I went hiking in the rain.", category=Category.EPISODIC)
    new = fact("Yesterday I did not go hiking, I changed plans.", Category.EPISODIC, update=2)
    assert judge(new, old, similarity, TH) is Judgement.KEEP_BOTH


def test_low_similarity_keeps_both_even_with_negation() -> None:
    old = rec("A", "I like jazz.", category=Category.PREFERENCE)
    assert (
        judge(fact("I no longer like sushi.", Category.PREFERENCE, update=2), old, 0.5, TH)
        is Judgement.KEEP_BOTH
    )
    assert judge(
        fact("我不喜欢爵士乐", Category.PREFERENCE),
        rec("B", "我喜欢摇滚", category=Category.PREFERENCE),
        0.6,
        TH,
    ) is (Judgement.KEEP_BOTH)


def test_conflict_band_supersedes_on_a_negation_flip_only() -> None:
    old = rec("A", "I drink coffee every morning.", category=Category.PREFERENCE)
    assert (
        judge(fact("I don't drink coffee in the morning.", Category.PREFERENCE), old, 0.78, TH)
        is Judgement.SUPERSEDE
    )
    assert judge(
        fact("我不喜欢吃辣", Category.PREFERENCE),
        rec("B", "我喜欢吃辣", category=Category.PREFERENCE),
        0.9,
        TH,
    ) is (Judgement.SUPERSEDE)
    # in the band, same polarity: keep both
    assert (
        judge(fact("I drink coffee after lunch too.", Category.PREFERENCE), old, 0.85, TH)
        is Judgement.KEEP_BOTH
    )
    # both negated: no flip
    neg = rec("C", "I don't eat meat.", category=Category.PREFERENCE)
    assert judge(fact("I don't eat fish.", Category.PREFERENCE), neg, 0.85, TH) is Judgement.KEEP_BOTH


# ---------------------------------------------------------------------------- judge_update


def test_an_explicit_change_on_the_same_topic_replaces_the_old_fact() -> None:
    old = rec("A", "I drink coffee every morning.", category=Category.PREFERENCE)
    assert (
        judge_update(fact("I switched from coffee to tea.", Category.PREFERENCE, update=2), old, 0.6, TH)
        is True
    )


def test_no_update_cue_or_a_pinned_memory_is_never_replaced() -> None:
    old = rec("A", "I drink coffee every morning.", category=Category.PREFERENCE)
    assert (
        judge_update(fact("I drink coffee with oat milk.", Category.PREFERENCE, update=0), old, 0.9, TH)
        is False
    )
    pinned = replace(old, pinned=True)
    assert (
        judge_update(fact("I switched from coffee to tea.", Category.PREFERENCE, update=2), pinned, 0.9, TH)
        is False
    )


def test_an_update_about_another_topic_replaces_nothing() -> None:
    old = rec("A", "I play the cello.", category=Category.FACT)
    assert judge_update(fact("I switched banks last month.", Category.FACT, update=2), old, 0.3, TH) is False


def test_multi_valued_key_update_never_supersedes() -> None:
    old = rec(
        "A", "I'm allergic to shellfish.", category=Category.PREFERENCE, key="allergy", value="shellfish"
    )
    new = fact("I'm now also allergic to peanuts.", Category.PREFERENCE, "allergy", "peanuts", update=2)
    assert judge_update(new, old, 0.6, TH) is False


def test_different_keys_never_supersede_each_other() -> None:
    old = rec(
        "A", "I'm a product manager.", category=Category.IDENTITY, key="occupation", value="product manager"
    )
    new = fact("My new manager is Tom Okafor.", Category.IDENTITY, "manager", "Tom Okafor", update=2)
    assert judge_update(new, old, 0.5, TH) is False


def test_episodic_memories_are_never_replaced_by_an_update() -> None:
    old = rec("A", "Yesterday I went hiking in the rain.", category=Category.EPISODIC)
    new = fact("Today I switched to hiking in the sun instead.", Category.EPISODIC, update=2)
    assert judge_update(new, old, 0.6, TH) is False


def test_near_identical_or_same_text_is_a_duplicate() -> None:
    old = rec("A", "I play the cello.", category=Category.GENERAL)
    assert judge(fact("I play the cello.", Category.GENERAL), old, 0.3, TH) is Judgement.DUPLICATE
    assert judge(fact("I play cello.", Category.GENERAL), old, 0.96, TH) is Judgement.DUPLICATE


def test_different_categories_keep_both() -> None:
    old = rec("A", "I moved to Oslo.", category=Category.IDENTITY)
    assert judge(fact("I visited Oslo.", Category.EPISODIC, update=2), old, 0.9, TH) is Judgement.KEEP_BOTH
    assert judge(fact("I don't like Oslo.", Category.PREFERENCE), old, 0.9, TH) is Judgement.KEEP_BOTH


# ---------------------------------------------------------------------------- plan: decay

CFG = ConsolidationConfig()


def test_empty_input_plans_nothing() -> None:
    assert plan([], T0, CFG) == Plan()
    assert Plan().empty


def test_decay_is_written_only_when_it_moves_at_least_min_delta() -> None:
    items = [
        rec("A", importance=0.5, age_days=1),
        rec("B", importance=0.5, age_days=5),
        rec("C", importance=0.5, age_days=4),
    ]
    result = plan(items, T0, CFG)
    assert [d.memory_id for d in result.decays] == ["B"]  # 0.5 -> 0.4876 (moved 0.0124); C moved only 0.00995
    decay = result.decays[0]
    assert decay.importance == pytest.approx(round(0.5 * 0.995**5, 4))
    assert decay.expected_version == 1
    assert result.merges == () and result.evictions == ()


def test_decay_counts_from_the_last_update() -> None:
    record = rec("A", importance=0.8, age_days=100, updated_at=T0 - timedelta(days=1))
    assert plan([record], T0, CFG).decays == ()


@pytest.mark.parametrize("protected", [{"pinned": True}, {"layer": Layer.PERMANENT}])
def test_pinned_and_permanent_never_decay(protected: dict[str, object]) -> None:
    assert plan([rec("A", importance=0.8, age_days=200, **protected)], T0, CFG).empty


def test_config_is_validated() -> None:
    with pytest.raises(ValueError):
        ConsolidationConfig(decay_rate=0)
    with pytest.raises(ValueError):
        ConsolidationConfig(decay_rate=1.5)
    with pytest.raises(ValueError):
        ConsolidationConfig(ttl_days=0)
    with pytest.raises(ValueError):
        ConsolidationConfig(min_importance=1.5)


# ---------------------------------------------------------------------------- plan: dedup / merge


def test_dedup_keeps_the_more_valuable_memory() -> None:
    strong = rec("A", "I live in Porto.", importance=0.8)
    weak = rec("B", "I live in Porto!", importance=0.4)
    result = plan([weak, strong], T0, CFG, pairs=[("B", "A", 0.97)])
    assert len(result.merges) == 1
    merge = result.merges[0]
    assert (merge.survivor_id, merge.absorbed_id, merge.kind, merge.similarity) == ("A", "B", "dedup", 0.97)


def test_dedup_prefers_the_more_recent_when_importance_ties() -> None:
    old = rec("A", importance=0.5, age_days=3)
    fresh = rec("B", importance=0.5, age_days=0)
    result = plan([old, fresh], T0, CFG, pairs=[("A", "B", 0.99)])
    assert (result.merges[0].survivor_id, result.merges[0].absorbed_id) == ("B", "A")


def test_merge_needs_the_same_category_and_key() -> None:
    a = rec("A", "I like green tea", category=Category.PREFERENCE, importance=0.6)
    b = rec("B", "I like oolong tea", category=Category.PREFERENCE, importance=0.5)
    c = rec("C", "Tea is from China", category=Category.FACT, importance=0.5)
    d = rec(
        "D", "I'm allergic to nuts", category=Category.PREFERENCE, key="allergy", value="nuts", importance=0.5
    )
    merged = plan([a, b], T0, CFG, pairs=[("A", "B", 0.85)])
    assert [(m.survivor_id, m.absorbed_id, m.kind) for m in merged.merges] == [("A", "B", "merge")]
    assert plan([a, c], T0, CFG, pairs=[("A", "C", 0.85)]).merges == ()
    assert plan([a, d], T0, CFG, pairs=[("A", "D", 0.85)]).merges == ()
    assert plan([a, b], T0, CFG, pairs=[("A", "B", 0.79)]).merges == ()  # below the merge threshold


def test_a_memory_is_absorbed_at_most_once_and_the_strongest_pair_goes_first() -> None:
    a, b, c = rec("A", importance=0.7), rec("B", importance=0.4), rec("C", importance=0.6)
    result = plan([a, b, c], T0, CFG, pairs=[("A", "B", 0.96), ("C", "B", 0.99)])
    assert [(m.survivor_id, m.absorbed_id) for m in result.merges] == [("C", "B")]


def test_pairs_naming_unknown_or_inactive_ids_are_ignored() -> None:
    a = rec("A")
    gone = rec("B", status=Status.SUPERSEDED)
    result = plan([a, gone], T0, CFG, pairs=[("A", "B", 0.99), ("A", "ZZ", 0.99), ("A", "A", 1.0)])
    assert result.merges == ()


# ---------------------------------------------------------------------------- plan: eviction


def test_eviction_needs_both_age_and_low_importance() -> None:
    items = [
        rec("OLD_LOW", importance=0.1, age_days=45),
        rec("OLD_HIGH", importance=0.6, age_days=45),
        rec("NEW_LOW", importance=0.1, age_days=10),
    ]
    result = plan(items, T0, CFG)
    assert [(e.memory_id, e.reason) for e in result.evictions] == [("OLD_LOW", "expired_and_unimportant")]
    assert "OLD_LOW" not in {d.memory_id for d in result.decays}


def test_eviction_reads_the_decayed_importance() -> None:
    # 0.32 after 45 days at x0.995/day is ~0.255: below 0.3 once decayed
    result = plan([rec("A", importance=0.32, age_days=45)], T0, CFG)
    assert [e.memory_id for e in result.evictions] == ["A"]


@pytest.mark.parametrize(
    "protected",
    [{"pinned": True}, {"layer": Layer.PERMANENT}, {"importance": 0.95}],
    ids=["pinned", "permanent", "important"],
)
def test_protected_memories_are_never_evicted_or_merged_away(protected: dict[str, object]) -> None:
    base = {"importance": 0.05, **protected}
    guarded = rec("G", age_days=400, **base)  # type: ignore[arg-type]
    other = rec("O", importance=0.05, age_days=400)
    result = plan([guarded, other], T0, CFG, pairs=[("G", "O", 0.99)])
    assert "G" not in {e.memory_id for e in result.evictions}
    assert "G" not in {m.absorbed_id for m in result.merges}
    assert [(m.survivor_id, m.absorbed_id) for m in result.merges] == [("G", "O")]


def test_hubs_are_never_evicted_or_merged_away() -> None:
    hub = rec("H", importance=0.05, age_days=400)
    leaf = rec("L", importance=0.5, age_days=0)
    result = plan([hub, leaf], T0, CFG, pairs=[("H", "L", 0.99)], hubs=frozenset({"H"}))
    assert result.evictions == ()
    assert [(m.survivor_id, m.absorbed_id) for m in result.merges] == [("H", "L")]


def test_two_protected_memories_are_left_alone() -> None:
    a = rec("A", pinned=True)
    b = rec("B", layer=Layer.PERMANENT)
    assert plan([a, b], T0, CFG, pairs=[("A", "B", 0.99)]).merges == ()


def test_mixed_scopes_are_refused() -> None:
    with pytest.raises(ValueError):
        plan([rec("A"), rec("B", scope=Scope("t1", "u2"))], T0, CFG)
    with pytest.raises(ValueError):
        plan([rec("A"), rec("B", scope=Scope("t2", "u1"))], T0, CFG)


# ---------------------------------------------------------------------------- property


IDS = [f"M{i}" for i in range(8)]


@st.composite
def memories(draw: st.DrawFn) -> tuple[list[MemoryRecord], list[tuple[str, str, float]], frozenset[str]]:
    chosen = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=8, unique=True))
    items = []
    for memory_id in chosen:
        items.append(
            rec(
                memory_id,
                category=draw(st.sampled_from([Category.FACT, Category.PREFERENCE, Category.EPISODIC])),
                key=draw(st.sampled_from([None, None, "allergy"])),
                importance=draw(st.floats(0.0, 1.0)),
                age_days=draw(st.floats(0.0, 400.0)),
                pinned=draw(st.booleans()),
                layer=draw(st.sampled_from([Layer.LONG_TERM, Layer.LONG_TERM, Layer.PERMANENT])),
                status=draw(
                    st.sampled_from([Status.ACTIVE, Status.ACTIVE, Status.ACTIVE, Status.SUPERSEDED])
                ),
                version=draw(st.integers(1, 5)),
            )
        )
    pool = [*IDS, "X1", "X2"]  # pairs may name ids that are not in the input
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(pool), st.sampled_from(pool), st.floats(0.0, 1.0)), max_size=12)
    )
    hubs = frozenset(draw(st.lists(st.sampled_from(pool), max_size=3)))
    return items, pairs, hubs


@settings(max_examples=300, deadline=None)
@given(data=memories(), days_later=st.floats(0.0, 100.0))
def test_plan_never_names_unknown_ids_or_touches_protected_records(
    data: tuple[list[MemoryRecord], list[tuple[str, str, float]], frozenset[str]], days_later: float
) -> None:
    items, pairs, hubs = data
    now = T0 + timedelta(days=days_later)
    result = plan(items, now, CFG, pairs=pairs, hubs=hubs, scorer=Scorer())
    by_id = {r.memory_id: r for r in items}
    active = {i for i, r in by_id.items() if r.is_active}

    def protected(memory_id: str) -> bool:
        r = by_id[memory_id]
        return (
            r.pinned
            or r.layer is Layer.PERMANENT
            or r.importance >= CFG.protect_importance
            or memory_id in hubs
        )

    named = (
        {d.memory_id for d in result.decays}
        | {m.survivor_id for m in result.merges}
        | {m.absorbed_id for m in result.merges}
        | {e.memory_id for e in result.evictions}
    )
    assert named <= active
    absorbed = [m.absorbed_id for m in result.merges]
    evicted = [e.memory_id for e in result.evictions]
    assert len(absorbed) == len(set(absorbed))
    assert not any(protected(i) for i in absorbed)
    assert not any(protected(i) for i in evicted)
    assert not set(absorbed) & set(evicted)
    for decay in result.decays:
        record = by_id[decay.memory_id]
        assert not record.never_decays
        assert decay.expected_version == record.version
        assert 0.0 <= decay.importance < record.importance
        assert record.importance - decay.importance >= CFG.min_delta - 1e-4
        assert decay.memory_id not in absorbed and decay.memory_id not in evicted
    for merge in result.merges:
        assert merge.survivor_id != merge.absorbed_id
        assert merge.similarity >= CFG.thresholds.merge - 1e-9
        if merge.kind == "merge":
            a, b = by_id[merge.survivor_id], by_id[merge.absorbed_id]
            assert a.category is b.category and a.key == b.key
    for eviction in result.evictions:
        assert by_id[eviction.memory_id].created_at < now - timedelta(days=CFG.ttl_days)  # type: ignore[operator]


@settings(max_examples=50, deadline=None)
@given(data=memories())
def test_plan_does_not_depend_on_the_order_of_the_items(
    data: tuple[list[MemoryRecord], list[tuple[str, str, float]], frozenset[str]],
) -> None:
    items, pairs, hubs = data
    a = plan(items, T0, CFG, pairs=pairs, hubs=hubs)
    b = plan(list(reversed(items)), T0, CFG, pairs=pairs, hubs=hubs)
    assert (set(a.decays), a.merges, set(a.evictions)) == (set(b.decays), b.merges, set(b.evictions))
