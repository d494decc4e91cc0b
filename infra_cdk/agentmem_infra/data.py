"""DynamoDB tables (built from ``agentmem.adapters.aws.dynamodb_schema``) and the SQS queues.

The tables are not re-described here: :func:`table_from_request` turns the library's own
``CreateTable`` requests into CDK tables, so keys, attribute types, LSIs, GSIs, projections,
billing mode and stream view type cannot drift from what the adapters and their moto tests use.
TTL is on ``dynamodb_schema.TTL_ATTRIBUTE`` for the tables ``create_tables`` enables it on.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agentmem.adapters.aws import dynamodb_schema as schema
from agentmem_infra.config import EnvConfig

# Which table gets TTL: mirrors dynamodb_schema.create_tables (checked by tests/infra).
TTL_TABLES = {"memory": schema.TTL_ATTRIBUTE, "session": schema.TTL_ATTRIBUTE, "audit": None}
REQUESTS = {
    "memory": schema.memory_table_request,
    "session": schema.session_table_request,
    "audit": schema.audit_table_request,
}
_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}
_PROJECTIONS = {
    "ALL": dynamodb.ProjectionType.ALL,
    "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY,
    "INCLUDE": dynamodb.ProjectionType.INCLUDE,
}
_STREAMS = {
    "NEW_AND_OLD_IMAGES": dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    "NEW_IMAGE": dynamodb.StreamViewType.NEW_IMAGE,
    "OLD_IMAGE": dynamodb.StreamViewType.OLD_IMAGE,
    "KEYS_ONLY": dynamodb.StreamViewType.KEYS_ONLY,
}


def _keys(
    request_keys: list[dict[str, str]], types: dict[str, str]
) -> tuple[dynamodb.Attribute, dynamodb.Attribute | None]:
    """(partition key, sort key) of a ``KeySchema``."""
    partition: dynamodb.Attribute | None = None
    sort: dynamodb.Attribute | None = None
    for key in request_keys:
        name = key["AttributeName"]
        attribute = dynamodb.Attribute(name=name, type=_TYPES[types[name]])
        if key["KeyType"] == "HASH":
            partition = attribute
        else:
            sort = attribute
    assert partition is not None, request_keys
    return partition, sort


def _projection(index: dict[str, Any]) -> tuple[dynamodb.ProjectionType, list[str] | None]:
    projection = index.get("Projection") or {"ProjectionType": "ALL"}
    non_key = list(projection["NonKeyAttributes"]) if projection.get("NonKeyAttributes") else None
    return _PROJECTIONS[projection["ProjectionType"]], non_key


def table_from_request(
    scope: Construct,
    id: str,
    request: dict[str, Any],
    *,
    ttl_attribute: str | None,
    encryption_key: kms.IKey | None,
    removal_policy: RemovalPolicy,
    deletion_protection: bool,
) -> dynamodb.Table:
    """A CDK table equal to a ``CreateTable`` request (the name is left to CloudFormation)."""
    types = {a["AttributeName"]: a["AttributeType"] for a in request["AttributeDefinitions"]}
    stream = request.get("StreamSpecification") or {}
    billing = (
        dynamodb.BillingMode.PAY_PER_REQUEST
        if request.get("BillingMode", "PAY_PER_REQUEST") == "PAY_PER_REQUEST"
        else dynamodb.BillingMode.PROVISIONED
    )
    partition_key, sort_key = _keys(request["KeySchema"], types)
    table = dynamodb.Table(
        scope,
        id,
        partition_key=partition_key,
        sort_key=sort_key,
        billing_mode=billing,
        stream=_STREAMS[stream["StreamViewType"]] if stream.get("StreamEnabled") else None,
        time_to_live_attribute=ttl_attribute,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        encryption=(
            dynamodb.TableEncryption.CUSTOMER_MANAGED
            if encryption_key
            else dynamodb.TableEncryption.AWS_MANAGED
        ),
        encryption_key=encryption_key,
        removal_policy=removal_policy,
        deletion_protection=deletion_protection,
    )
    for index in request.get("LocalSecondaryIndexes", []):
        _, lsi_sort = _keys(index["KeySchema"], types)
        assert lsi_sort is not None, index
        projection_type, non_key = _projection(index)
        table.add_local_secondary_index(
            index_name=index["IndexName"],
            sort_key=lsi_sort,
            projection_type=projection_type,
            non_key_attributes=non_key,
        )
    for index in request.get("GlobalSecondaryIndexes", []):
        gsi_partition, gsi_sort = _keys(index["KeySchema"], types)
        projection_type, non_key = _projection(index)
        table.add_global_secondary_index(
            index_name=index["IndexName"],
            partition_key=gsi_partition,
            sort_key=gsi_sort,
            projection_type=projection_type,
            non_key_attributes=non_key,
        )
    return table


class Tables(Construct):
    def __init__(self, scope: Construct, id: str, *, config: EnvConfig, key: kms.IKey | None) -> None:
        super().__init__(scope, id)
        common: dict[str, Any] = {
            "encryption_key": key,
            "removal_policy": config.removal_policy,
            "deletion_protection": config.deletion_protection,
        }
        # The name passed to the request builders is a placeholder: CloudFormation names the
        # tables, and the functions learn the names from AGENTMEM_TABLE_*.
        self.memory = table_from_request(
            self, "Memory", REQUESTS["memory"]("memory"), ttl_attribute=TTL_TABLES["memory"], **common
        )
        self.session = table_from_request(
            self, "Session", REQUESTS["session"]("session"), ttl_attribute=TTL_TABLES["session"], **common
        )
        self.audit = table_from_request(
            self, "Audit", REQUESTS["audit"]("audit"), ttl_attribute=TTL_TABLES["audit"], **common
        )


class Queues(Construct):
    """The ingest queue + its DLQ, the projector's on-failure queue, the schedules' DLQ."""

    MAX_RECEIVE_COUNT = 5
    VISIBILITY_FACTOR = 6  # AWS guidance for SQS → Lambda: ≥ 6 × the function timeout
    # Turn bodies are user text (redacted by the API, but a chat service may send straight to
    # SQS): keep them no longer than retries and an outage need (docs/data-at-rest.md). Every
    # receive can take a whole visibility timeout, so MAX_RECEIVE_COUNT of them, twice over for
    # throttling, and never under a day: SQS deletes a message whose retention runs out without
    # moving it to the DLQ, so a consumer stopped longer than the retention (a broken deploy, a
    # disabled event source, concurrency exhausted) would lose turns silently. The oldest-message
    # alarm fires after 10 minutes; a day leaves an operator the night to act on it.
    RETRY_HEADROOM = 2
    MIN_INGEST_RETENTION_S = 86400
    DLQ_RETENTION = Duration.days(4)  # time for an operator to inspect and redrive, not a store

    @classmethod
    def ingest_retention_s(cls, ingest_timeout_s: int) -> int:
        """The ingest queue's retention: what its retries need, no more (SQS allows 60 s–14 d)."""
        retry_window = cls.MAX_RECEIVE_COUNT * cls.VISIBILITY_FACTOR * ingest_timeout_s
        return min(14 * 86400, max(cls.MIN_INGEST_RETENTION_S, cls.RETRY_HEADROOM * retry_window))

    def __init__(self, scope: Construct, id: str, *, config: EnvConfig) -> None:
        super().__init__(scope, id)
        ingest_timeout = config.functions["ingest"].timeout_s
        self.ingest_dlq = self._queue("IngestDlq", retention=self.DLQ_RETENTION)
        self.ingest = self._queue(
            "Ingest",
            retention=Duration.seconds(self.ingest_retention_s(ingest_timeout)),
            visibility_timeout=Duration.seconds(self.VISIBILITY_FACTOR * ingest_timeout),
            dead_letter_queue=sqs.DeadLetterQueue(
                max_receive_count=self.MAX_RECEIVE_COUNT, queue=self.ingest_dlq
            ),
        )
        # Failed stream batches (after retries/bisection): records of the shard + sequence range,
        # to replay from the table (the reconciler also repairs whatever they missed).
        self.projector_failures = self._queue("ProjectorFailures", retention=Duration.days(14))
        # EventBridge deliveries to consolidate/reconcile that exhausted their retries.
        self.schedule_dlq = self._queue("ScheduleDlq", retention=Duration.days(14))

    def _queue(self, id: str, *, retention: Duration, **kwargs: Any) -> sqs.Queue:
        return sqs.Queue(
            self,
            id,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=retention,
            **kwargs,
        )
