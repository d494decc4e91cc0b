"""The retention pass of the embedded stores (run by the local event sources every
``retention_every_s``): what AWS expires on its own — TTLs on the session and memory tables,
DynamoDB Streams' 24 hours — deleted here by the same rules (docs/data-at-rest.md), then each file
given its space back where much of it is free.

Every adapter that keeps something only for a while is a :class:`~agentmem.ports.Retained`;
every file a :class:`~agentmem.ports.Compactable`. A pass deletes first, then compacts, and
reports what it dropped. Outbox rows dropped before the projector applied them are a warning: a
projection may have missed them until the reconciler's next walk.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentmem.ports import Compactable, Retained, RetentionPolicy

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetentionReport:
    deleted: dict[str, int] = field(default_factory=dict)  # rows, by what they were
    vacuumed: int = 0  # files rewritten


@dataclass
class RetentionService:
    policy: RetentionPolicy
    targets: Sequence[Retained] = ()
    files: Sequence[Compactable] = ()

    def run(self, now: datetime) -> RetentionReport:
        deleted: dict[str, int] = {}
        for target in self.targets:
            for kind, count in target.apply_retention(self.policy, now).items():
                if count:
                    deleted[kind] = deleted.get(kind, 0) + count
        vacuumed = sum(1 for f in self.files if f.compact(self.policy.vacuum_free_fraction))
        if deleted.get("outbox_expired_unapplied"):
            log.warning(
                "retention.outbox_expired_unapplied", extra={"count": deleted["outbox_expired_unapplied"]}
            )
        if deleted or vacuumed:
            log.info("retention.pass", extra={"deleted": deleted, "vacuumed": vacuumed})
        return RetentionReport(deleted, vacuumed)
