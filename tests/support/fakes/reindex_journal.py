"""The in-memory :class:`~agentmem.ports.ReindexJournal`: staged vectors per scope, the staged
scopes and the progress with its revision check, as the DynamoDB and SQLite journals keep them.
``fail(method)`` (from :class:`~support.fakes.memory.Switchable`) makes a call unavailable."""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Sequence
from datetime import datetime

from agentmem.domain.models import Scope
from agentmem.errors import VersionConflict
from agentmem.ports import ReindexJournal, ReindexProgress, StagedVector
from support.fakes.memory import Switchable


class InMemoryReindexJournal(Switchable, ReindexJournal):
    store_name = "reindex-journal"

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self._model = model_id
        self.vectors: dict[str, dict[str, StagedVector]] = {}  # scope key -> memory id -> staged
        self.scopes: dict[str, tuple[Scope, datetime]] = {}
        self.saved: ReindexProgress | None = None

    @property
    def model_id(self) -> str:
        return self._model

    def staged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, StagedVector]:
        self._enter("staged")
        held = self.vectors.get(scope.key, {})
        return {m: held[m] for m in memory_ids if m in held}

    def keep(self, scope: Scope, rows: Sequence[StagedVector]) -> None:
        self._enter("keep")
        self.vectors.setdefault(scope.key, {}).update({r.memory_id: r for r in rows})

    def mark_scope(self, scope: Scope, listed_at: datetime) -> None:
        self._enter("mark_scope")
        self.scopes[scope.key] = (scope, listed_at)

    def staged_scopes(
        self, limit: int, cursor: str | None = None
    ) -> tuple[builtins.list[tuple[Scope, datetime]], str | None]:
        self._enter("staged_scopes")
        keys = sorted(k for k in self.scopes if cursor is None or k > cursor)
        page = keys[:limit]
        more = len(keys) > limit
        return [self.scopes[k] for k in page], (page[-1] if more else None)

    def discard_scope(self, scope: Scope) -> None:
        self._enter("discard_scope")
        self.vectors.pop(scope.key, None)
        self.scopes.pop(scope.key, None)

    def progress(self) -> ReindexProgress | None:
        self._enter("progress")
        return None if self.saved is None else dataclasses.replace(self.saved)

    def save_progress(self, progress: ReindexProgress) -> ReindexProgress:
        self._enter("save_progress")
        held = 0 if self.saved is None else self.saved.revision
        if progress.revision != held:
            raise VersionConflict("another run saved meanwhile", details={"revision": progress.revision})
        self.saved = dataclasses.replace(progress, revision=held + 1)
        return dataclasses.replace(self.saved)
