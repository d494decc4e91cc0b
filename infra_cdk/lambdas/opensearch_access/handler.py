"""CloudFormation custom resource: map the functions' IAM roles to an OpenSearch security role.

The domain runs fine-grained access control with this function's role as the master user. On
Create/Update it puts (SigV4, service ``es``, inside the VPC):

* ``PUT _plugins/_security/api/roles/<RoleName>``: the cluster permissions the adapter needs
  (bulk/search, index template put/get, monitor) and every index permission on ``IndexPattern``;
* ``PUT _plugins/_security/api/rolesmapping/<RoleName>``: ``backend_roles`` = ``BackendRoles``.

Delete is best effort (the domain may be going away too) and always reports success. Only the
standard library and the runtime's botocore are used, so the code needs no bundling.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.error
import urllib.request
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

log = logging.getLogger()
log.setLevel(logging.INFO)

CLUSTER_PERMISSIONS = [
    "cluster_composite_ops",
    "cluster_monitor",
    "indices:admin/index_template/get",
    "indices:admin/index_template/put",
]
RETRIES = 7  # the security index may still be initialising right after the domain is created


def role_body(index_pattern: str) -> dict[str, Any]:
    return {
        "description": "agentmem functions (managed by CloudFormation)",
        "cluster_permissions": CLUSTER_PERMISSIONS,
        "index_permissions": [{"index_patterns": [index_pattern], "allowed_actions": ["indices_all"]}],
    }


def mapping_body(backend_roles: list[str]) -> dict[str, Any]:
    return {"backend_roles": sorted(set(backend_roles)), "description": "agentmem function roles"}


def _signed(method: str, endpoint: str, path: str, body: dict[str, Any] | None) -> tuple[int, str]:
    session = boto3.session.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise RuntimeError("no credentials")
    region = os.environ.get("AWS_REGION") or session.region_name or "us-east-1"
    url = f"https://{endpoint}{path}"
    data = json.dumps(body).encode("utf-8") if body is not None else None
    request = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json"})
    SigV4Auth(credentials.get_frozen_credentials(), "es", region).add_auth(request)
    raw = urllib.request.Request(url, data=data, method=method, headers=dict(request.headers.items()))
    try:
        with urllib.request.urlopen(raw, timeout=30) as response:
            return int(response.status), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode("utf-8", "replace")


def _put(endpoint: str, path: str, body: dict[str, Any], sleep: Any = time.sleep) -> None:
    last = ""
    for attempt in range(RETRIES):
        try:
            status, text = _signed("PUT", endpoint, path, body)
        except (urllib.error.URLError, OSError) as exc:
            status, text = 0, str(exc)
        if 200 <= status < 300:
            log.info(json.dumps({"path": path, "status": status}))
            return
        last = f"{status} {text[:300]}"
        if status not in (0, 429, 500, 502, 503, 504) and status != 403:
            break
        if attempt < RETRIES - 1:
            sleep(min(30, 5 * 2**attempt))  # 5+10+20+30*3 s at most: < 3 min
    raise RuntimeError(f"PUT {path} failed: {last}")


def apply(properties: dict[str, Any], sleep: Any = time.sleep) -> None:
    endpoint = str(properties["Endpoint"]).removeprefix("https://").rstrip("/")
    role = str(properties["RoleName"])
    _put(endpoint, f"/_plugins/_security/api/roles/{role}", role_body(str(properties["IndexPattern"])), sleep)
    _put(
        endpoint,
        f"/_plugins/_security/api/rolesmapping/{role}",
        mapping_body(list(properties["BackendRoles"])),
        sleep,
    )


def send(event: dict[str, Any], context: Any, status: str, reason: str, physical_id: str) -> None:
    body = json.dumps(
        {
            "Status": status,
            "Reason": (reason or f"see {getattr(context, 'log_stream_name', 'the logs')}")[:1000],
            "PhysicalResourceId": physical_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": False,
            "Data": {},
        }
    ).encode("utf-8")
    request = urllib.request.Request(
        event["ResponseURL"],
        data=body,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )
    urllib.request.urlopen(request, timeout=30).close()


def handler(event: dict[str, Any], context: Any) -> None:
    properties = event.get("ResourceProperties") or {}
    physical_id = event.get("PhysicalResourceId") or (
        f"{properties.get('Endpoint', 'domain')}/{properties.get('RoleName', 'role')}"
    )
    status, reason = "SUCCESS", ""
    try:
        if event.get("RequestType") in ("Create", "Update"):
            apply(properties)
    except Exception as exc:  # every failure must still answer CloudFormation
        log.exception("role mapping failed")
        status, reason = "FAILED", str(exc)
    send(event, context, status, reason, physical_id)
