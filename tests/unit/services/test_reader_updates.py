"""The statement reader on the write and read paths (issue 35), on the in-memory fakes (hash
embedder: the rules alone read): another person's fact never retires the user's, a wish never
supersedes, a retraction or a correction ends the earlier fact with its history kept, one fact of
a multi-fact sentence retires alone, and the issue's two-turn example answers with the new city."""

from __future__ import annotations

from datetime import timedelta

from agentmem.domain.context import Mode
from agentmem.domain.models import Status
from support.fake_world import T0, S, World, turn


def _contents(world: World) -> list[str]:
    return [r.content for r in world.active()]


def test_the_new_city_is_in_the_profile_and_answers_first(world: World) -> None:
    world.c.pipeline.ingest(
        turn("m1", "I am Alice, I live in Lisbon and I am vegetarian. My sister Beth lives in Oslo.")
    )
    outcome = world.c.pipeline.ingest(
        turn("m2", "We finally relocated to Porto last month, the new flat is great.", hours=24 * 19)
    )
    assert len(outcome.superseded) == 1
    world.drain()
    now = T0 + timedelta(days=20)
    recalled = world.c.recall.recall(S, "which city do I live in?", k=5, now=now).memories
    assert "Porto" in recalled[0].record.content
    assert not any("Lisbon" in m.record.content for m in recalled)
    built = world.c.context.build(S, "which city do I live in?", mode=Mode.CHAT, now=now)
    profile = built.context.text.split("## Profile", 1)[1]
    assert "Porto" in profile and "Lisbon" not in profile
    assert any("vegetarian" in c for c in _contents(world))  # the other facts of that turn stay


def test_another_persons_value_never_retires_the_users(world: World) -> None:
    pairs = [
        ("I live in Bremen.", "My brother just bought a flat in Hamburg."),
        ("I drive a Mazda 3.", "My mum traded her car in for a Toyota Yaris."),
        ("我在网易上班。", "我同学跳槽去了百度。"),
        ("我开的是一辆朗逸。", "我妈上个月换了辆比亚迪。"),
    ]
    for i, (mine, theirs) in enumerate(pairs):
        world.c.pipeline.ingest(turn(f"a{i}", mine, hours=10 * i))
        outcome = world.c.pipeline.ingest(turn(f"b{i}", theirs, hours=10 * i + 1))
        assert outcome.superseded == [], (mine, theirs)
        assert mine in _contents(world)
        assert any(r.content == theirs and "subject:other" in r.tags for r in world.active())


def test_wishes_plans_and_hypotheticals_never_supersede(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I drive a Honda Civic."))
    for i, text in enumerate(
        [
            "Someday I'd love to own a Porsche 911.",
            "If I moved to Vienna I'd sell the Civic and buy a Skoda.",
            "有朝一日想开一辆特斯拉。",
        ]
    ):
        outcome = world.c.pipeline.ingest(turn(f"w{i}", text, hours=i + 1))
        assert outcome.superseded == [], text
    assert "I drive a Honda Civic." in _contents(world)


def test_a_retraction_ends_the_earlier_fact_and_keeps_its_history(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I do hot yoga at the Lotus studio every Tuesday."))
    outcome = world.c.pipeline.ingest(turn("m2", "I stopped doing hot yoga, my back hurt.", hours=48))
    assert len(outcome.superseded) == 1
    (ended,) = world.records(S, Status.SUPERSEDED)
    assert "Lotus" in ended.content and ended.valid_to == T0 + timedelta(hours=48)
    assert not any("Lotus" in c for c in _contents(world))


def test_a_correction_amends_the_statement_it_corrects(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "The team dinner is at 7pm on Thursday."))
    outcome = world.c.pipeline.ingest(turn("m2", "Wait, no, I meant 8pm.", hours=0.1))
    assert len(outcome.superseded) == 1
    assert "The team dinner is at 8pm on Thursday." in _contents(world)
    world.c.pipeline.ingest(turn("z1", "家长会是周四下午。", hours=1))
    world.c.pipeline.ingest(turn("z2", "不对，我记错了，是周五下午。", hours=1.1))
    assert "家长会是周五下午。" in _contents(world)
    assert not any("7pm" in c or "周四" in c for c in _contents(world))


def test_one_fact_of_a_multi_fact_sentence_retires_alone(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "I work at Nokia and I drive a Kia Ceed."))
    world.c.pipeline.ingest(turn("m2", "I work at Ericsson now.", hours=24))
    contents = " | ".join(_contents(world))
    assert "Ericsson" in contents and "Kia" in contents and "Nokia" not in contents


def test_two_unnamed_third_parties_never_retire_each_other(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "我同学上个月搬去了无锡。"))
    outcome = world.c.pipeline.ingest(turn("m2", "我同事刚搬到了苏州。", hours=24))
    assert outcome.superseded == []
    assert len(world.active()) == 2


def test_a_third_partys_newer_value_does_not_demote_the_users_at_read_time(world: World) -> None:
    world.c.pipeline.ingest(turn("m1", "我开的是一辆朗逸。"))
    world.c.pipeline.ingest(turn("m2", "我妈上个月换了辆比亚迪。", hours=24))
    world.drain()
    recalled = world.c.recall.recall(S, "我开什么车？", k=5, now=T0 + timedelta(days=2)).memories
    assert "朗逸" in recalled[0].record.content
    assert not any(c.startswith("stale") for c in recalled[0].channels)
