"""Export and import of a user's memories.

Export reads the source of truth page by page (newest first, no vectors): the content is already
redacted at rest, so what leaves is what is stored — placeholders, never the PII they replaced.

Import writes each item through the explicit write entrance
(:class:`~agentmem.services.explicit_write.ExplicitWriter`, as ``POST /v1/memories`` does): the
same guards (an injection is rejected and audited, PII redacted), the same policy permission. An
item whose redacted content equals an active memory of the user is not stored again (reason
``duplicate``), so importing one file twice stores it once. One item's refusal never stops the
others: each comes back with its index and reasons.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.domain.guards import redact
from agentmem.domain.models import Category, MemoryRecord, Scope, Source, Status
from agentmem.errors import Forbidden
from agentmem.ports import MemoryStore, Page
from agentmem.services.explicit_write import ExplicitWriter

EXPORT_PAGE = 200
DUPLICATE_SCAN = 10_000  # active memories compared against imported content


@dataclass(frozen=True, slots=True)
class ImportItem:
    content: str
    category: Category | None = None
    importance: float | None = None
    pinned: bool = False
    tags: tuple[str, ...] = ()


@dataclass
class ImportReport:
    imported: int = 0
    memory_ids: list[str] = field(default_factory=list)
    rejected: list[tuple[int, list[str]]] = field(default_factory=list)  # (index, reasons)


@dataclass
class TransferService:
    store: MemoryStore
    writer: ExplicitWriter

    def export_page(
        self, scope: Scope, *, status: Status = Status.ACTIVE, limit: int = 1000, cursor: str | None = None
    ) -> Page:
        """One page of the scope's memories of ``status``, newest first, without vectors."""
        return self.store.list(scope, statuses=(status,), limit=limit, cursor=cursor, embeddings=False)

    def export_all(self, scope: Scope, *, status: Status = Status.ACTIVE) -> Iterator[MemoryRecord]:
        cursor: str | None = None
        while True:
            page = self.export_page(scope, status=status, limit=EXPORT_PAGE, cursor=cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def import_items(
        self,
        scope: Scope,
        items: Sequence[ImportItem],
        *,
        now: datetime,
        request_id: str,
        may_write_policy: bool = False,
    ) -> ImportReport:
        """Write each item through the guards (item ``i`` with the request id
        ``<request_id>:i``); a refused item is reported with its index, never raised. The items
        are the operator's (``Source.ADMIN``) only for a caller holding the policy permission;
        a plain caller's import is their own explicit write."""
        report = ImportReport()
        stored = {r.content for r in self.store.scan_active(scope, DUPLICATE_SCAN, embeddings=False)}
        for index, item in enumerate(items):
            if redact(item.content).text in stored:
                report.rejected.append((index, ["duplicate"]))
                continue
            try:
                record, outcome = self.writer.write(
                    scope,
                    item.content,
                    now=now,
                    category=item.category,
                    importance=item.importance,
                    pinned=item.pinned,
                    source=Source.ADMIN if may_write_policy else Source.EXPLICIT,
                    tags=item.tags,
                    request_id=f"{request_id}:{index}",
                    may_write_policy=may_write_policy,
                )
            except Forbidden as exc:
                report.rejected.append((index, [f"forbidden:{exc.message}"]))
                continue
            if record is None:
                report.rejected.append((index, list(outcome.reasons)))
                continue
            stored.add(record.content)
            report.imported += 1
            report.memory_ids.append(record.memory_id)
        return report
