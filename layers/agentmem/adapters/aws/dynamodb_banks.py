""":class:`agentmem.ports.PrototypeBanks` over the session table: the semantic guard's prototype
banks, embedded once per account and model, read by every later cold start.

Without it each new Lambda container embedded every prototype (244 texts, one Bedrock
``InvokeModel`` each: Titan takes one text per call) before its first write. Now the first
container stores them and the others read them with one ``Query``.

Items: ``pk = BANKS#<key>`` (the key names the model and a digest of the bank's texts, so a change
of either is a new key), ``sk = chunk#<nnnn>``, each holding up to :data:`ROWS_PER_ITEM` rows as
float16 (DynamoDB items stop at 400 KB; a 1024-d row is 2 KB), the bank's row count and width on
every chunk. ``ttl`` lets an unused bank expire (:data:`RETENTION`). A bank is taken only whole:
a missing chunk or a count that does not add up reads as absent, and the guard embeds it again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from agentmem.adapters.aws.dynamodb_base import DynamoTable, Item, dynamodb_client, n, number, s, text
from agentmem.adapters.aws.errors import LazyClient

ROWS_PER_ITEM = 96  # 96 × 1024 × 2 bytes = 192 KiB, well under the 400 KB item limit
RETENTION = timedelta(days=30)
_PREFIX = "BANKS#"


class DynamoPrototypeBanks:
    """The semantic guard's banks in the session table (granted Query/PutItem to ingest and api)."""

    def __init__(
        self,
        table_name: str,
        *,
        client: LazyClient[Any] | None = None,
        region: str | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._t = DynamoTable(dynamodb_client(client, region), table_name, store="dynamodb-session")
        self._clock = clock or (lambda: datetime.now(UTC))

    def load(self, key: str) -> np.ndarray | None:
        items = list(
            self._t.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(_PREFIX + key)},
            )
        )
        if not items:
            return None
        rows, width = number(items[0], "rows"), number(items[0], "width")
        chunks = sorted(items, key=lambda i: text(i, "sk"))
        parts = [np.frombuffer(c["vectors"]["B"], dtype="<f2") for c in chunks]
        flat = np.concatenate(parts) if parts else np.empty(0, dtype="<f2")
        if rows <= 0 or width <= 0 or flat.size != rows * width:
            return None  # a bank written in part: embed it again
        return flat.reshape(rows, width).astype(np.float32)

    def save(self, key: str, vectors: np.ndarray) -> None:
        rows, width = vectors.shape
        data = np.asarray(vectors, dtype="<f2")
        expires = int((self._clock() + RETENTION).timestamp())
        for start in range(0, rows, ROWS_PER_ITEM):
            item: Item = {
                "pk": s(_PREFIX + key),
                "sk": s(f"chunk#{start // ROWS_PER_ITEM:04d}"),
                "rows": n(rows),
                "width": n(width),
                "vectors": {"B": data[start : start + ROWS_PER_ITEM].tobytes()},
                "ttl": n(expires),
            }
            self._t.call("put_item", Item=item)


__all__ = ["ROWS_PER_ITEM", "DynamoPrototypeBanks"]
