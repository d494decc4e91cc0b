"""Builders of AWS-shaped events for local mode: API Gateway REST proxy, SQS batch, DynamoDB
Streams batch, EventBridge scheduled event. Shapes follow the AWS documentation samples."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

REGION = "local"
ACCOUNT = "000000000000"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:agentmem-ingest"
TABLE_STREAM_ARN = (
    f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/agentmem-memories/stream/2026-01-01T00:00:00.000"
)


def api_gateway_event(
    method: str,
    path: str,
    *,
    query: Mapping[str, list[str]] | None = None,
    headers: Mapping[str, str] | None = None,
    body: str | None = None,
    authorizer: Mapping[str, Any] | None = None,
    source_ip: str = "127.0.0.1",
) -> dict[str, Any]:
    headers = dict(headers or {})
    query = dict(query or {})
    request_id = str(uuid.uuid4())
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method.upper(),
        "headers": headers or None,
        "multiValueHeaders": {k: [v] for k, v in headers.items()} or None,
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "accountId": ACCOUNT,
            "resourceId": "local",
            "stage": "v1",
            "requestId": request_id,
            "identity": {"sourceIp": source_ip, "userAgent": headers.get("User-Agent", "")},
            "resourcePath": "/{proxy+}",
            "httpMethod": method.upper(),
            "path": path,
            "apiId": "local",
            "protocol": "HTTP/1.1",
            "requestTimeEpoch": int(datetime.now(UTC).timestamp() * 1000),
            "authorizer": dict(authorizer) if authorizer else None,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def sqs_record(
    message_id: str, receipt_handle: str, body: str, *, receive_count: int, sent_at: datetime
) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": receipt_handle,
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": str(int(sent_at.timestamp() * 1000)),
            "SenderId": "local",
            "ApproximateFirstReceiveTimestamp": str(int(sent_at.timestamp() * 1000)),
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": QUEUE_ARN,
        "awsRegion": REGION,
    }


def sqs_event(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": list(records)}


def sqs_event_of(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The SQS event Lambda would deliver for messages from boto3's ``receive_message``
    (``AttributeNames=["All"]``)."""
    return sqs_event(
        [
            sqs_record(
                m["MessageId"],
                m["ReceiptHandle"],
                m["Body"],
                receive_count=int(m["Attributes"]["ApproximateReceiveCount"]),
                sent_at=datetime.fromtimestamp(int(m["Attributes"]["SentTimestamp"]) / 1000, UTC),
            )
            for m in messages
        ]
    )


def api_event_as(
    tenant_id: str,
    user_id: str,
    method: str,
    path: str,
    body: Any = None,
    permissions: str = "memory:read,memory:write",
) -> dict[str, Any]:
    """An API Gateway event of a JSON call by one user, past the authorizer."""
    return api_gateway_event(
        method,
        path,
        body=None if body is None else json.dumps(body, ensure_ascii=False),
        authorizer={"tenant_id": tenant_id, "user_id": user_id, "permissions": permissions},
        headers={"Content-Type": "application/json"},
    )


def stream_record(
    *,
    event_name: str,
    sequence: int,
    keys: Mapping[str, Any],
    new_image: Mapping[str, Any] | None,
    old_image: Mapping[str, Any] | None,
    created_at: datetime,
) -> dict[str, Any]:
    dynamodb: dict[str, Any] = {
        "ApproximateCreationDateTime": int(created_at.timestamp()),
        "Keys": dict(keys),
        "SequenceNumber": f"{sequence:021d}",
        "SizeBytes": 0,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new_image is not None:
        dynamodb["NewImage"] = dict(new_image)
    if old_image is not None:
        dynamodb["OldImage"] = dict(old_image)
    return {
        "eventID": hashlib.sha1(f"{sequence}".encode(), usedforsecurity=False).hexdigest(),
        "eventName": event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": REGION,
        "dynamodb": dynamodb,
        "eventSourceARN": TABLE_STREAM_ARN,
    }


def scheduled_event(rule: str, *, at: datetime, detail: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT,
        "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:events:{REGION}:{ACCOUNT}:rule/agentmem-{rule}"],
        "detail": dict(detail or {}),
    }
