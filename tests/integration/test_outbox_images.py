"""The embedded store's outbox images (:func:`agentmem.adapters.embedded.outbox.image_json`) are
the very text the DynamoDB codec writes (the projector's contract), for any record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.adapters.codec import image_to_record, record_to_json_image
from agentmem.adapters.embedded.memory_store import SqliteMemoryStore
from agentmem.adapters.embedded.outbox import image_json
from agentmem.domain.models import (
    Category,
    Confidence,
    ImportanceSource,
    Layer,
    MemoryRecord,
    Scope,
    Source,
    SourceRefs,
    Status,
)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_text = st.text(min_size=1, max_size=12)  # any script: 中文, English, emoji, quotes, escapes
_maybe = st.none() | _text
_when = st.none() | st.integers(0, 10**8).map(lambda us: T0 + timedelta(microseconds=us * 997))
_floats = st.floats(-1.0, 1.0, allow_nan=False, width=32)


@st.composite
def records(draw: st.DrawFn) -> MemoryRecord:
    vector = draw(st.none() | st.lists(_floats, min_size=1, max_size=6))
    return MemoryRecord(
        scope=Scope(draw(st.sampled_from(["t1", "租户"])), draw(st.sampled_from(["u1", "用户"]))),
        memory_id=draw(st.text("0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=4, max_size=26)),
        content=draw(st.sampled_from(["我喜欢吃辣", "I moved to Berlin", 'say "hi"\n\\'])) + draw(_text),
        category=draw(st.sampled_from(list(Category))),
        layer=draw(st.sampled_from(list(Layer))),
        key=draw(_maybe),
        value=draw(_maybe),
        tags=tuple(draw(st.lists(_text, max_size=3))),
        slot_hint=draw(_maybe),
        importance=draw(st.floats(0.0, 1.0, allow_nan=False)),
        importance_source=draw(st.sampled_from(list(ImportanceSource))),
        confidence=draw(st.sampled_from(list(Confidence))),
        source=draw(st.sampled_from(list(Source))),
        source_refs=SourceRefs(draw(_maybe), tuple(draw(st.lists(_text, max_size=3))), draw(_maybe)),
        embedding=None if vector is None else tuple(float(x) for x in np.asarray(vector, dtype=np.float32)),
        embedding_model=draw(_maybe),
        version=draw(st.integers(1, 10**6)),
        created_at=draw(_when),
        updated_at=draw(_when),
        last_accessed_at=draw(_when),
        access_count=draw(st.integers(0, 10**6)),
        valid_from=draw(_when),
        valid_to=draw(_when),
        status=draw(st.sampled_from(list(Status))),
        supersedes=tuple(draw(st.lists(_text, max_size=2))),
        superseded_by=draw(_maybe),
        pinned=draw(st.booleans()),
        expires_at=draw(_when),
        entities=tuple(draw(st.lists(_text, max_size=3))),
    )


@settings(max_examples=300, deadline=None)
@given(records())
def test_image_json_is_the_codec_text(record: MemoryRecord) -> None:
    assert image_json(record) == record_to_json_image(record)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 1.0, allow_nan=False) | st.sampled_from([0.0, 1.0, 1e-5, 5e-324, 0.1 + 0.2, 1 / 3]))
def test_numbers_are_written_as_the_codec_writes_them(importance: float) -> None:
    record = MemoryRecord(
        scope=Scope("t", "u"), memory_id="m1", content="x", category=Category.GENERAL, importance=importance
    )
    assert image_json(record) == record_to_json_image(record)


def test_store_outbox_carries_new_and_old_images_the_projector_reads() -> None:
    store = SqliteMemoryStore(":memory:")
    scope = Scope("t1", "u1")
    first = MemoryRecord(
        scope=scope,
        memory_id="01JAAAAAAAAAAAAAAAAAAAAAAA",
        content="我住在上海",
        category=Category.FACT,
        embedding=(0.5, -0.25),
        embedding_model="hash",
        created_at=T0,
        updated_at=T0,
    )
    store.create(first)
    second = first.evolve(now=T0 + timedelta(days=1), content="I live in Berlin now")
    store.update(second, first.version)
    rows = store.outbox.read_outbox(0, 10)
    assert [r.event_name for r in rows] == ["INSERT", "MODIFY"]
    assert rows[0].new_record() == first and rows[0].old_record() is None
    assert rows[1].new_record() == second and rows[1].old_record() == first
    assert image_to_record(rows[1].new_image or {}) == second
