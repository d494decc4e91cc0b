"""``agentmem reindex``: every active memory of an embedded data directory moves to a new model
(here an OpenAI-compatible server's, the local fake of :mod:`support.fakes.fake_openai`); staging
leaves the old vectors serving, a killed run resumes where its journal ends, and the switch puts
every memory's new vector in one transaction, catching up on memories written meanwhile."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.adapters.openai_compat import OpenAICompatEmbedder, Transport
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.domain.similarity import Calibration
from agentmem.settings import load_settings
from agentmem_dev.cli import main
from agentmem_dev.reindex import Journal, ReindexReport, active_records, stage, switch
from support.fakes.fake_openai import FakeOpenAI, fake_openai_server

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
ALICE, BOB = Scope("t1", "alice"), Scope("t1", "bob")
FACTS = {
    ALICE: ["I live in Glasgow.", "I prefer window seats.", "我喜欢喝乌龙茶。", "My sister is called Maria."],
    BOB: ["我住在杭州西湖区。", "I am allergic to peanuts.", "I drive a blue van."],
}
MODEL = "openai-compatible/fake-embed"


def seeded(tmp_path: Path) -> Container:
    settings = load_settings(data_dir=tmp_path / "data", embedder="hash")
    container = bootstrap(settings, clock=ManualClock(T0), embedder=HashEmbedder())
    for scope, facts in FACTS.items():
        for i, fact in enumerate(facts):
            record, _ = container.explicit.write(scope, fact, now=T0, request_id=f"{scope.user_id}-{i}")
            assert record is not None
    return container


def records(container: Container) -> list[MemoryRecord]:
    return [container.store.get(r.scope, r.memory_id) for r in active_records(container.store)]  # type: ignore[misc]


def target(server: FakeOpenAI) -> OpenAICompatEmbedder:
    embedder = OpenAICompatEmbedder(Transport(server.url), model="fake-embed", batch=2)
    return embedder.with_calibration(Calibration(MODEL, 0.1, 0.8, 0.05, 0.7))


class Killed(Exception):
    pass


class KilledAfter:
    """The target embedder, killed after ``calls`` batches (the process dying mid-run)."""

    def __init__(self, inner: OpenAICompatEmbedder, calls: int) -> None:
        self.inner, self.calls = inner, calls
        self.model_id, self.dimension, self.calibration = inner.model_id, inner.dimension, inner.calibration

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.calls == 0:
            raise Killed
        self.calls -= 1
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def test_staging_leaves_the_old_vectors_serving_and_resumes_after_a_kill(tmp_path: Path) -> None:
    container = seeded(tmp_path)
    before = {(r.memory_id, r.version, r.embedding_model) for r in records(container)}
    with fake_openai_server() as server:
        embedder = target(server)
        journal = Journal(Journal.path(tmp_path / "data", MODEL), MODEL)
        with pytest.raises(Killed):
            stage(container.store, KilledAfter(embedder, 2), journal, ReindexReport(MODEL), batch=2)  # type: ignore[arg-type]
        first = len(server.requests) - 1  # one was the dimension probe
        resumed = ReindexReport(MODEL)
        stage(container.store, embedder, journal, resumed, batch=2)
        journal.close()
    assert {(r.memory_id, r.version, r.embedding_model) for r in records(container)} == before  # untouched
    assert all(model == "hash/ngram-256" for _, _, model in before)
    # 7 memories: Alice's 4 staged before the kill; the resumed walk starts at Bob's scope
    assert first == 2 and resumed.staged == 3 and resumed.memories == 7
    inputs = [text for r in server.requests[1:] for text in r.body["input"]]
    assert sorted(inputs) == sorted(f for facts in FACTS.values() for f in facts)  # each embedded once


def test_the_switch_moves_every_memory_at_once_and_catches_up_on_late_writes(tmp_path: Path) -> None:
    container = seeded(tmp_path)
    with fake_openai_server() as server:
        embedder = target(server)
        journal = Journal(Journal.path(tmp_path / "data", MODEL), MODEL)
        report = ReindexReport(MODEL)
        stage(container.store, embedder, journal, report)
        late, _ = container.explicit.write(
            ALICE, "I moved to Leeds.", now=T0, request_id="late"
        )  # after staging
        assert late is not None
        versions = {r.memory_id: r.version for r in records(container)}
        assert switch(container.store, embedder, journal, report)
        journal.close()
        moved = records(container)
        assert report.switched == 8 and report.caught_up == 1 and report.attempts == 1
        assert all(r.embedding_model == MODEL for r in moved)
        assert all(r.version == versions[r.memory_id] + 1 for r in moved)
        for r in moved:
            np.testing.assert_allclose(np.asarray(r.embedding), server.vector(r.content, 64), atol=1e-6)
        assert {r.status for r in moved} == {Status.ACTIVE}


def test_the_command_stages_then_switches_and_a_second_run_has_nothing_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    container = seeded(tmp_path)
    with fake_openai_server() as server:
        for name, value in {
            "AGENTMEM_DATA_DIR": str(tmp_path / "data"),
            "AGENTMEM_OPENAI_BASE_URL": server.url,
            "AGENTMEM_OPENAI_EMBED_MODEL": "fake-embed",
            "AGENTMEM_OPENAI_EMBED_CALIBRATION": "0.1,0.8,0.05,0.7",
        }.items():
            monkeypatch.setenv(name, value)
        assert main(["reindex", "--embedder", "openai-compatible", "--stage-only"]) == 0
        staged = json.loads(capsys.readouterr().out)
        assert {r.embedding_model for r in records(container)} == {"hash/ngram-256"}
        assert main(["reindex", "--embedder", "openai-compatible"]) == 0
        switched = json.loads(capsys.readouterr().out)
        assert main(["reindex", "--embedder", "openai-compatible"]) == 0
        again = json.loads(capsys.readouterr().out)
    assert staged["staged"] == 7 and staged["switched_all"] is False
    assert switched["staged"] == 0 and switched["reused"] == 7 and switched["switched"] == 7
    assert again["staged"] == 0 and again["switched"] == 0 and again["memories"] == 0  # all of the new model
    assert {r.embedding_model for r in records(container)} == {MODEL}


def test_an_uncalibrated_target_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded(tmp_path)
    monkeypatch.setenv("AGENTMEM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENTMEM_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENTMEM_OPENAI_EMBED_MODEL", "fake-embed")
    assert main(["reindex", "--embedder", "openai-compatible"]) == 2
