"""The DynamoDB tables of the AWS backend, as ``CreateTable`` requests (docs/aws.md explains them).

The infrastructure code should create the same key schemas and indexes; :func:`create_tables`
builds them directly (moto tests, the smoke run, a developer account). Three tables:

``memory`` (Streams NEW_AND_OLD_IMAGES = the projector's outbox, TTL on ``ttl``)
    ``pk = TENANT#t#USER#u`` and, per item type, ``sk``:
    ``MEM#<memory_id>`` a memory (codec item), ``PENDING`` the consolidation counter of the user,
    ``SCOPE`` the scope registry entry the reconciler walks; and ``pk = RECONCILE``,
    ``sk = CURSOR#<segments>#<segment>`` a reconcile segment's saved cursor.
    LSI ``by_key`` (pk, ``mem_key``): active-or-not records carrying a key, read consistently;
    it projects ``status`` only, so a keyed write adds a small index entry, not a second copy of
    the record (with its embedding), and :meth:`find_by_key` fetches the few active matches.
    GSI ``slot_lists`` (``slot_pk`` = ``<pk>#<category>``, ``slot_sk`` = memory id): sparse —
    only *active* records of the :data:`SLOT_CATEGORIES` the context slots list carry these
    attributes, so a slot listing reads that category's records and nothing else of the
    partition (eventually consistent, as every GSI). Projection INCLUDE of every record
    attribute but the embedding (:data:`~agentmem.adapters.codec.RECORD_ATTRIBUTES`): an entry
    is a quarter of the item (≈0.6 KB instead of ≈2.7 KB at 1024 dimensions), so a listing of
    100 reads ≈8 units instead of ≈34 and a slot record's index write is one unit, not three.
    The context slots list without vectors (``embeddings=False``); a listing that wants them
    reads the page's items from the table. (It replaced the GSI ``slots``, projection ALL.)
    GSI ``dirty_users`` (``dirty_shard``, ``dirty_rank``): sparse — only PENDING items with
    writes since the last consolidation carry these attributes, over 16 hash shards; keys only,
    and the keys change twice between two consolidations (dirty, then ready), not per turn, so
    a turn's counter update writes nothing to the index (:mod:`.dynamodb_bookkeeping`).
    GSI ``scopes`` (``scope_shard`` = ``SCOPES#<nn>``, ``scope_key``): sparse — only SCOPE
    items, over 64 hash shards (:mod:`agentmem.domain.scope_walk`), which the reconcile
    segments divide between them.
``session`` (TTL on ``ttl``)
    ``TURN#<message_id>`` an L0 raw turn, ``DONE#<message_id>`` a processed mark,
    ``STATE#<session_id>`` runtime task state. LSI ``by_session`` (pk, ``session_sk``) orders
    the turns of one session by time and arrival.
``audit`` (append-only: the functions' role gets ``PutItem`` with a condition and ``Query``)
    ``AT#<at>#<event_id>`` an event without a caller's id (time-ordered by its key, no index
    entry), ``EVT#<event_id>`` one with an id (and every event of the older layout), which
    carries ``at_sk`` for the LSI ``by_time`` (pk, ``at_sk``); a listing merges the two.
"""

from __future__ import annotations

from typing import Any

from agentmem.adapters.codec import RECORD_ATTRIBUTES

MEMORY_LSI_BY_KEY = "by_key"
MEMORY_GSI_DIRTY = "dirty_users"
MEMORY_GSI_SCOPES = "scopes"
MEMORY_GSI_SLOTS = "slot_lists"
# The categories the context slots list (services/context.py: Profile = identity + preference,
# Constraints = policy); a test keeps the two in step.
SLOT_CATEGORIES = frozenset({"identity", "preference", "policy"})
SESSION_LSI_BY_SESSION = "by_session"
AUDIT_LSI_BY_TIME = "by_time"
TTL_ATTRIBUTE = "ttl"


def _keys(*names: str) -> list[dict[str, str]]:
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def _schema(hash_key: str, range_key: str) -> list[dict[str, str]]:
    return [{"AttributeName": hash_key, "KeyType": "HASH"}, {"AttributeName": range_key, "KeyType": "RANGE"}]


def memory_table_request(name: str) -> dict[str, Any]:
    return {
        "TableName": name,
        "AttributeDefinitions": _keys(
            "pk",
            "sk",
            "mem_key",
            "dirty_shard",
            "dirty_rank",
            "scope_shard",
            "scope_key",
            "slot_pk",
            "slot_sk",
        ),
        "KeySchema": _schema("pk", "sk"),
        "LocalSecondaryIndexes": [
            {
                "IndexName": MEMORY_LSI_BY_KEY,
                "KeySchema": _schema("pk", "mem_key"),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]},
            }
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": MEMORY_GSI_DIRTY,
                "KeySchema": _schema("dirty_shard", "dirty_rank"),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": MEMORY_GSI_SCOPES,
                "KeySchema": _schema("scope_shard", "scope_key"),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": MEMORY_GSI_SLOTS,
                "KeySchema": _schema("slot_pk", "slot_sk"),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(RECORD_ATTRIBUTES)},
            },
        ],
        "BillingMode": "PAY_PER_REQUEST",
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


def session_table_request(name: str) -> dict[str, Any]:
    return {
        "TableName": name,
        "AttributeDefinitions": _keys("pk", "sk", "session_sk"),
        "KeySchema": _schema("pk", "sk"),
        "LocalSecondaryIndexes": [
            {
                "IndexName": SESSION_LSI_BY_SESSION,
                "KeySchema": _schema("pk", "session_sk"),
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }


def audit_table_request(name: str) -> dict[str, Any]:
    return {
        "TableName": name,
        "AttributeDefinitions": _keys("pk", "sk", "at_sk"),
        "KeySchema": _schema("pk", "sk"),
        "LocalSecondaryIndexes": [
            {
                "IndexName": AUDIT_LSI_BY_TIME,
                "KeySchema": _schema("pk", "at_sk"),
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }


def create_tables(client: Any, *, memory: str, session: str, audit: str) -> dict[str, str]:
    """Create the three tables (and enable TTL); returns ``{"memory_stream_arn": ...}``."""
    created = client.create_table(**memory_table_request(memory))
    client.create_table(**session_table_request(session))
    client.create_table(**audit_table_request(audit))
    waiter = client.get_waiter("table_exists")  # DynamoDB refuses TTL on a table still CREATING
    for table in (memory, session, audit):
        waiter.wait(TableName=table, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    for table in (memory, session):
        client.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
        )
    return {"memory_stream_arn": str(created["TableDescription"].get("LatestStreamArn", ""))}
