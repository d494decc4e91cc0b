"""The in-memory :class:`~agentmem.ports.ConflictStore`: pending conflicts by (scope, id), stored as
the JSON document the real stores keep (:mod:`agentmem.adapters.conflict_codec`), so what comes
back is what a real store would give; paged by the same cursor."""

from __future__ import annotations

import builtins

from agentmem.adapters.conflict_codec import from_doc, page, to_doc
from agentmem.domain.models import Scope
from agentmem.domain.pending import ConflictStatus, PendingConflict
from agentmem.errors import NotFound, VersionConflict
from agentmem.ports import ConflictStore
from support.fakes.memory import Switchable


class InMemoryConflictStore(Switchable, ConflictStore):
    """:class:`~agentmem.ports.ConflictStore`: a put is idempotent by id, a resolution wins once."""

    store_name = "conflict-store"

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[tuple[str, str], str] = {}

    def put(self, conflict: PendingConflict) -> bool:
        with self._lock:
            self._enter("put")
            key = (conflict.scope.key, conflict.conflict_id)
            if key in self._docs:
                return False
            self._docs[key] = to_doc(conflict)
            return True

    def get(self, scope: Scope, conflict_id: str) -> PendingConflict | None:
        with self._lock:
            self._enter("get")
            doc = self._docs.get((scope.key, conflict_id))
            return None if doc is None else from_doc(scope, doc)

    def resolve(self, conflict: PendingConflict) -> None:
        with self._lock:
            self._enter("resolve")
            key = (conflict.scope.key, conflict.conflict_id)
            doc = self._docs.get(key)
            if doc is None:
                raise NotFound("conflict not found", details={"conflict_id": conflict.conflict_id})
            if from_doc(conflict.scope, doc).status is not ConflictStatus.PENDING:
                raise VersionConflict(
                    "conflict already resolved", details={"conflict_id": conflict.conflict_id}
                )
            self._docs[key] = to_doc(conflict)

    def list(
        self,
        scope: Scope,
        *,
        status: ConflictStatus | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[builtins.list[PendingConflict], str | None]:
        with self._lock:
            self._enter("list")
            mine = [from_doc(scope, d) for (pk, _), d in self._docs.items() if pk == scope.key]
        return page(mine, status, limit, cursor)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._enter("erase_scope")
            doomed = [k for k in self._docs if k[0] == scope.key]
            for key in doomed:
                del self._docs[key]
            return len(doomed)
