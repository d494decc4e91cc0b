"""Scene summaries (agentmem.domain.summary): extractive, by memory id; the most important facts
kept and shown in the order they were said; key entities counted across the session; rendered
from live records only, in zh and en; stored as JSON and read back whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentmem.domain.models import Category, Confidence, MemoryRecord, Scope, Status
from agentmem.domain.summary import SceneLog, SceneSummary, SummaryEntity, build_summary, summary_lines

S = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def record(
    mid: str,
    content: str,
    minute: int,
    *,
    importance: float = 0.5,
    entities: tuple[str, ...] = (),
    **kw: object,
) -> MemoryRecord:
    at = T0 + timedelta(minutes=minute)
    return MemoryRecord(
        scope=S,
        memory_id=mid,
        content=content,
        category=kw.pop("category", Category.FACT),  # type: ignore[arg-type]
        importance=importance,
        entities=entities,
        created_at=at,
        valid_from=at,
        **kw,  # type: ignore[arg-type]
    )


def scene(*ids: str, turns: int = 3) -> SceneLog:
    return SceneLog(
        "s1", T0, T0 + timedelta(minutes=30), frozenset(f"m{i}" for i in range(turns)), frozenset(ids)
    )


def test_facts_are_the_most_important_in_the_order_they_were_said() -> None:
    records = [record(f"r{i}", f"fact {i}", minute=i, importance=0.1 * (i % 5) + 0.1) for i in range(12)]
    summary = build_summary(scene(*(r.memory_id for r in records)), records, max_facts=4)
    chosen = sorted(records, key=lambda r: -r.importance)[:4]
    assert set(summary.fact_ids) == {r.memory_id for r in chosen}
    assert list(summary.fact_ids) == sorted(summary.fact_ids, key=lambda i: int(i[1:]))  # said order
    assert summary.turns == 3 and summary.memory_ids_seen == 12


def test_only_the_scenes_active_memories_stand_in_it() -> None:
    records = [
        record("a", "I live in Oslo.", 0, status=Status.SUPERSEDED),
        record("b", "I live in Bergen.", 1),
        record("c", "Only operators set this.", 2, category=Category.POLICY),
        record("d", "A week-old note.", 3, confidence=Confidence.EXPIRED),
        record("e", "Another session's fact.", 4),
    ]
    summary = build_summary(scene("a", "b", "c", "d"), records)
    assert summary.fact_ids == ("b",)


def test_entities_are_counted_case_blind_with_their_carriers() -> None:
    records = [
        record("a", "Maria lives in Auckland.", 0, entities=("Maria", "Auckland")),
        record("b", "maria visits me in May.", 1, entities=("maria",)),
        record("c", "我在杭州工作。", 2, entities=("杭州",)),
    ]
    summary = build_summary(scene("a", "b", "c"), records, max_entities=2)
    assert summary.entities == (SummaryEntity("Maria", ("a", "b")), SummaryEntity("Auckland", ("a",)))


def test_lines_in_both_languages_from_live_records_only() -> None:
    records = {
        "a": record("a", "Maria lives in Auckland.", 0, entities=("Maria",)),
        "b": record("b", "我喜欢龙井茶。", 1),
    }
    summary = build_summary(scene("a", "b"), records.values())
    en = [line.text for line in summary_lines(summary, records, "en")]
    assert en == [
        "session of 2026-01-05 (3 turns)",
        "Maria lives in Auckland.",
        "我喜欢龙井茶。",
        "key entities: Maria",
    ]
    zh = [line.text for line in summary_lines(summary, records, "zh")]
    assert zh[0] == "2026-01-05 的会话（3 轮）" and zh[-1] == "关键实体：Maria"
    assert [line.memory_id for line in summary_lines(summary, records, "en")] == [None, "a", "b", None]
    gone = {"b": records["b"]}  # "a" was deleted: neither it nor its entity is shown
    assert [line.text for line in summary_lines(summary, gone, "en")] == [
        "session of 2026-01-05 (3 turns)",
        "我喜欢龙井茶。",
    ]
    assert summary_lines(summary, {}, "zh") == []


def test_a_summary_reads_back_from_its_json() -> None:
    summary = SceneSummary(
        "s1", T0, T0, 2, ("a",), (SummaryEntity("京都", ("a",)),), text="旅行计划", memory_ids_seen=4
    )
    back = SceneSummary.from_dict(summary.to_dict())
    assert back == summary and back.memory_ids_seen == 4 and back.memory_ids == ("a",)
