"""The write pipeline reads a turn with the same user's turn before it, so PII split over the two
("my phone starts with 138" / "and the rest is 0013 8000") reaches neither memory nor the turn log."""

from __future__ import annotations

from agentmem.domain.models import Status
from support.fake_world import S, World, turn


def test_a_phone_number_split_over_two_turns_is_redacted(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "my phone starts with 138"))
    outcome = world.c.pipeline.ingest(turn("m2", "and the rest is 0013 8000", hours=0.01))
    assert "phone" in outcome.redacted_kinds
    raw = world.c.turn_log.recent_turns(S, "s1", 5)
    assert all("0013 8000" not in r.user for r in raw)
    contents = [r.content for r in world.store.list(S, statuses=(Status.ACTIVE,), limit=10).items]
    assert all("0013 8000" not in c for c in contents)


def test_a_turn_of_another_session_does_not_count(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "my phone starts with 138", session="s1"))
    world.c.pipeline.ingest(turn("m2", "and the rest is 0013 8000", hours=0.01, session="s2"))
    raw = world.c.turn_log.recent_turns(S, "s2", 5)
    assert [r.user for r in raw] == ["and the rest is 0013 8000"]
