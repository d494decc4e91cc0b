"""The in-memory :class:`~agentmem.ports.SessionSummaryStore`: per scope, each session's scene log
(the turns recorded, at most :data:`~agentmem.domain.summary.MAX_SCENE_TURNS`), its summary (kept
as the JSON the real stores keep) and the latest session with the one before it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain.models import Scope
from agentmem.domain.summary import MAX_SCENE_TURNS, LatestSession, SceneLog, SceneSummary
from agentmem.ports import SessionSummaryStore
from support.fakes.memory import Switchable


@dataclass
class _Turn:
    at: datetime
    memory_ids: tuple[str, ...]
    withheld: bool = False


@dataclass
class _Scope:
    scenes: dict[str, dict[str, _Turn]] = field(default_factory=dict)  # session -> message -> turn
    summaries: dict[str, str] = field(default_factory=dict)  # session -> JSON
    latest: LatestSession | None = None


class InMemorySummaryStore(Switchable, SessionSummaryStore):
    """:class:`~agentmem.ports.SessionSummaryStore`: recording a turn is idempotent per message id."""

    store_name = "summary-store"

    def __init__(self) -> None:
        super().__init__()
        self._scopes: dict[str, _Scope] = {}

    def record_turn(
        self,
        scope: Scope,
        session_id: str,
        message_id: str,
        at: datetime,
        memory_ids: Sequence[str],
        withheld: Sequence[str] = (),
    ) -> str | None:
        with self._lock:
            self._enter("record_turn")
            mine = self._scopes.setdefault(scope.key, _Scope())
            scene = mine.scenes.setdefault(session_id, {})
            if message_id not in scene and len(scene) < MAX_SCENE_TURNS:
                scene[message_id] = _Turn(at, tuple(memory_ids))
            for held in withheld:
                if held in scene:
                    scene[held].withheld = True
            before = mine.latest.session_id if mine.latest is not None else None
            if before == session_id:
                return None
            mine.latest = LatestSession(session_id, before)
            return before

    def scene(self, scope: Scope, session_id: str) -> SceneLog | None:
        with self._lock:
            self._enter("scene")
            turns = self._scopes.get(scope.key, _Scope()).scenes.get(session_id)
            if not turns:
                return None
            times = sorted(t.at for t in turns.values())
            return SceneLog(
                session_id=session_id,
                started_at=times[0],
                ended_at=times[-1],
                message_ids=frozenset(turns),
                memory_ids=frozenset(i for t in turns.values() for i in t.memory_ids),
                withheld=frozenset(m for m, t in turns.items() if t.withheld),
            )

    def latest(self, scope: Scope) -> LatestSession | None:
        with self._lock:
            self._enter("latest")
            mine = self._scopes.get(scope.key)
            return None if mine is None else mine.latest

    def put_summary(self, scope: Scope, summary: SceneSummary) -> None:
        with self._lock:
            self._enter("put_summary")
            mine = self._scopes.setdefault(scope.key, _Scope())
            mine.summaries[summary.session_id] = json.dumps(summary.to_dict(), ensure_ascii=False)

    def summary(self, scope: Scope, session_id: str) -> SceneSummary | None:
        with self._lock:
            self._enter("summary")
            doc = self._scopes.get(scope.key, _Scope()).summaries.get(session_id)
            return None if doc is None else SceneSummary.from_dict(json.loads(doc))

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            mine = self._scopes.pop(scope.key, None)
            if mine is None:
                return 0
            turns = sum(len(s) for s in mine.scenes.values())
            return turns + len(mine.summaries) + (mine.latest is not None)
