"""The access-pattern rows of the DynamoDB bench (:mod:`agentmem_dev.bench.dynamodb_cost`): the
reads that grew with the user or with the item, in their old and their current shape, priced on
the same data by AWS's rules (:mod:`agentmem_dev.bench.dynamodb_units`).

* measured (replayed through the priced client): the 20-newest neighbour listing without vectors
  (as the write pipeline reads it) and with them (memory items, then their ``VEC#`` items), the
  three slot listings as the partition walk they were and from the ``slot_lists`` GSI (without
  vectors, as the context slots read them, and with them);
* computed from the sizes of the items those listings return (marked ``computed``), as the
  older layout stored them (the vector inline in the memory item): the 200- and 20-newest
  listings, and the slot listings as the ALL-projected ``slots`` GSI read them (whole items).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentmem.adapters.aws.dynamodb_schema import SLOT_CATEGORIES
from agentmem.adapters.aws.dynamodb_store import DynamoMemoryStore
from agentmem.adapters.aws.dynamodb_vectors import VEC_DIGEST, VECTOR_ATTRIBUTES, vector_key
from agentmem.adapters.codec import SORT_KEY_PREFIX, memory_sort_key
from agentmem.domain.models import MemoryRecord, Scope, Status
from agentmem_dev.bench.dynamodb_units import RulesClient, item_size, read_units

OLD_NEIGHBOURS = 200
RECENT_NEIGHBOURS = 20  # the write pipeline's recent window (agentmem.services.neighbours.RECENT)
OLD_LISTING_LIMIT = 100  # services/slot_listings.py LISTING_LIMIT
GOAL_MEMORIES = 10_000  # docs/design.md "Performance targets": the walk is extrapolated to it


def _reads_of(rules: RulesClient, action: Callable[[], object]) -> float:
    rules.ledger.reset()
    action()
    return round(rules.ledger.totals()[0], 2)


def _old_listing(rules: RulesClient, table: str, scope: Scope, category: str) -> None:
    """The partition walk a slot listing was (before the slots GSI)."""
    kwargs: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :mem)",
        "FilterExpression": "#s IN (:s0) AND category = :category",
        "ExpressionAttributeNames": {"#s": "status"},
        "ExpressionAttributeValues": {
            ":pk": {"S": scope.key},
            ":mem": {"S": SORT_KEY_PREFIX},
            ":s0": {"S": Status.ACTIVE.value},
            ":category": {"S": category},
        },
        "ScanIndexForward": False,
        "ConsistentRead": True,
        "Limit": min(max(2 * (OLD_LISTING_LIMIT + 1), 25), 500),
    }
    found = 0
    while True:
        page = rules.query(**kwargs)
        found += len(page.get("Items", []))
        if found > OLD_LISTING_LIMIT or not page.get("LastEvaluatedKey"):
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _inline_sizes(rules: RulesClient, table: str, records: list[MemoryRecord]) -> int:
    """Bytes of the records' items as the older layout stored them: the vector inline."""
    total = 0
    for record in records:
        key = {"pk": {"S": record.scope.key}, "sk": {"S": memory_sort_key(record.memory_id)}}
        item = {k: v for k, v in (rules.stored(table, key) or {}).items() if k != VEC_DIGEST}
        vector = rules.stored(table, vector_key(record.scope, record.memory_id)) or {}
        item.update({k: v for k, v in vector.items() if k in VECTOR_ATTRIBUTES})
        total += item_size(item)
    return total


def access_patterns(
    rules: RulesClient, store: DynamoMemoryStore, table: str, scope: Scope, memories: int, dimension: int
) -> dict[str, Any]:
    """The rows (module docstring), for ``scope`` holding ``memories`` memories in ``table``."""
    slots = sorted(SLOT_CATEGORIES)

    def walk_all() -> None:
        for category in slots:
            _old_listing(rules, table, scope, category)

    walk = _reads_of(rules, walk_all)
    listed = {
        c: store.list(scope, category=c, limit=OLD_LISTING_LIMIT + 1, embeddings=False).items for c in slots
    }
    newest = store.scan_active(scope, OLD_NEIGHBOURS, embeddings=False)
    old_f32_neighbours = OLD_NEIGHBOURS * read_units(4 * dimension, consistent=True)  # lower bound
    return {
        "neighbour_listing_200_newest_vector_inline_before_computed": read_units(
            _inline_sizes(rules, table, newest), consistent=True
        ),
        "neighbour_listing_20_newest_vector_inline_before_computed": read_units(
            _inline_sizes(rules, table, newest[:RECENT_NEIGHBOURS]), consistent=True
        ),
        "neighbour_listing_20_newest_after": _reads_of(
            rules, lambda: store.scan_active(scope, RECENT_NEIGHBOURS, embeddings=False)
        ),
        "neighbour_listing_20_newest_with_vectors": _reads_of(
            rules, lambda: store.scan_active(scope, RECENT_NEIGHBOURS)
        ),
        "slot_listings_partition_walk_before": walk,
        "slot_listings_partition_walk_before_at_10k": round(walk * GOAL_MEMORIES / max(1, memories)),
        "slot_listings_gsi_projection_all_before_computed": sum(
            read_units(_inline_sizes(rules, table, listed[c]), consistent=False) for c in slots
        ),
        "slot_listings_slot_lists_gsi_after": _reads_of(
            rules,
            lambda: [store.list(scope, category=c, limit=OLD_LISTING_LIMIT, embeddings=False) for c in slots],
        ),
        "slot_listings_slot_lists_gsi_with_vectors": _reads_of(
            rules, lambda: [store.list(scope, category=c, limit=OLD_LISTING_LIMIT) for c in slots]
        ),
        "note": "read units by the rules, float16 vectors; the partition walk replays the old query shape over"
        " today's items (the vector apart: about a quarter of what it read with the vector inline)"
        f" (float32 items made each about twice as large: >= {old_f32_neighbours:.0f} units for 200 of them);"
        " the partition walk grows with the user (at 10k: extrapolated linearly), the rest do not;"
        " '_computed' rows price the same rows from their item sizes instead of replaying a query",
    }
