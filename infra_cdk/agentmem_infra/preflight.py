"""What an account needs before the first ``cdk deploy`` of an environment, read from the
synthesized template (``agentmem deploy check --env E``, or ``python infra_cdk/preflight.py``).

Three parts, each derived from the template, not from a list kept beside it:

* **prerequisites** — the CDK bootstrap; OpenSearch's service-linked role when a domain sits in
  a VPC and the stack does not create the role; Bedrock access to every model a role may invoke;
  the Lambda concurrency quota that the reserved concurrency needs (AWS keeps 100 unreserved);
  CloudWatch Logs resource policies (10 per region);
* **sizes** — each function's code plus the layer against Lambda's 250 MB unzipped limit (the
  layer estimated from the installed distributions its requirements resolve to, or measured from
  a built asset with ``--layer DIR``), and each function's environment against 4 KB;
* **monthly floor** — what the environment costs with no traffic: OpenSearch and Neptune
  instance-hours, OpenSearch storage, NAT gateways, interface endpoints, KMS keys, alarms and the
  WAF. Prices are :data:`PRICES` (us-east-1 on-demand list prices, see :data:`PRICES_AS_OF`),
  overridable with ``--prices file.json``; a resource the table does not price is printed as
  such, never counted as free. DynamoDB, Lambda, SQS, API Gateway and Bedrock bill per use and
  have no floor.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem_infra import FUNCTIONS_DIR, INFRA_DIR

HOURS_PER_MONTH = 730
LAMBDA_UNZIPPED_LIMIT = 262_144_000  # function code + layers, bytes
ENVIRONMENT_LIMIT = 4096  # bytes of a function's variables (keys + values)
UNRESERVED_MINIMUM = 100  # Lambda keeps this much of the account's concurrency unreserved
LOG_RESOURCE_POLICIES_PER_REGION = 10
TOKEN_BYTES = 64  # what an unresolved reference (an ARN, an endpoint) is counted as

PRICES_AS_OF = (
    "approximate us-east-1 on-demand list prices, not read from the AWS price list (no network here):"
    " check them for your region, or pass --prices"
)
PRICES: dict[str, float] = {
    # USD per hour
    "opensearch:t3.small.search": 0.036,
    "opensearch:t3.medium.search": 0.073,
    "opensearch:m6g.large.search": 0.128,
    "opensearch:r6g.large.search": 0.167,
    "neptune:db.t4g.medium": 0.079,
    "neptune:db.r6g.large": 0.322,
    "nat-gateway": 0.045,
    "interface-endpoint-az": 0.01,
    # USD per month
    "opensearch-gp3-gib": 0.122,
    "kms-key": 1.0,
    "alarm": 0.10,
    "waf-acl": 5.0,
    "waf-rule": 1.0,
}


@dataclass
class Preflight:
    env: str
    prerequisites: list[str] = field(default_factory=list)
    sizes: list[tuple[str, int, int]] = field(default_factory=list)  # (what, bytes, limit)
    costs: list[tuple[str, float | None]] = field(default_factory=list)  # (line, USD/month or None)
    problems: list[str] = field(default_factory=list)

    @property
    def monthly_floor(self) -> float:
        return sum(c for _, c in self.costs if c is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "prerequisites": self.prerequisites,
            "sizes": [{"what": w, "bytes": b, "limit": limit} for w, b, limit in self.sizes],
            "costs": [{"line": line, "usd_per_month": c} for line, c in self.costs],
            "monthly_floor_usd": round(self.monthly_floor, 2),
            "prices_as_of": PRICES_AS_OF,
            "problems": self.problems,
        }


def _of_type(template: Mapping[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def prerequisites(template: Mapping[str, Any]) -> list[str]:
    found = ["CDK bootstrap of the account and region: `npx aws-cdk@2 bootstrap aws://ACCOUNT/REGION`"]
    vpc_domains = [
        d
        for d in _of_type(template, "AWS::OpenSearchService::Domain").values()
        if "VPCOptions" in d["Properties"]
    ]
    creates_role = any(
        r["Properties"].get("AWSServiceName") == "opensearchservice.amazonaws.com"
        for r in _of_type(template, "AWS::IAM::ServiceLinkedRole").values()
    )
    if vpc_domains and not creates_role:
        found.append(
            "OpenSearch's service-linked role AWSServiceRoleForAmazonOpenSearchService (a VPC domain needs it):"
            " `aws iam create-service-linked-role --aws-service-name opensearchservice.amazonaws.com`"
            " once per account, or deploy this first stack with -c agentmem:createServiceLinkedRole=true"
        )
    models = sorted(
        {
            s.rsplit("/", 1)[1]
            for policy in _of_type(template, "AWS::IAM::Policy").values()
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
            if any(str(a).startswith("bedrock:") for a in _strings(statement.get("Action")))
            for s in _strings(statement.get("Resource"))
            if "foundation-model/" in s or "inference-profile/" in s
        }
    )
    if models:
        found.append(
            f"Bedrock model access in the region (console: Bedrock > Model access): {', '.join(models)}"
        )
    reserved = sum(
        int(f["Properties"].get("ReservedConcurrentExecutions", 0))
        for f in _of_type(template, "AWS::Lambda::Function").values()
    )
    if reserved:
        found.append(
            f"Lambda concurrency quota of at least {reserved + UNRESERVED_MINIMUM} ({reserved} reserved by the stack"
            f" + the {UNRESERVED_MINIMUM} Lambda keeps unreserved); new accounts often start at 10: Service Quotas >"
            " AWS Lambda > Concurrent executions"
        )
    uncalibrated = [
        f
        for f in _of_type(template, "AWS::Lambda::Function").values()
        if f["Properties"].get("Environment", {}).get("Variables", {}).get("AGENTMEM_EMBEDDER") == "bedrock"
        and "AGENTMEM_BEDROCK_EMBED_CALIBRATION" not in f["Properties"]["Environment"]["Variables"]
    ]
    if uncalibrated:
        found.append(
            "Titan's calibration anchors (the library ships placeholders): run `agentmem calibrate --embedder"
            " bedrock` with the account's credentials, then deploy with -c agentmem:embedCalibration=<anchors>"
        )
    policies = len(_of_type(template, "AWS::Logs::ResourcePolicy"))
    if policies:
        found.append(
            f"room for {policies} CloudWatch Logs resource polic{'y' if policies == 1 else 'ies'}"
            f" (at most {LOG_RESOURCE_POLICIES_PER_REGION} per region)"
        )
    return found


def _code_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _environment_bytes(variables: Mapping[str, Any]) -> int:
    total = 0
    for key, value in variables.items():
        total += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else TOKEN_BYTES)
    return total


def sizes(template: Mapping[str, Any], layer_bytes: int) -> list[tuple[str, int, int]]:
    found = []
    for fn in _of_type(template, "AWS::Lambda::Function").values():
        description = str(fn["Properties"].get("Description", ""))
        name = description.removeprefix("agentmem ").split(":", 1)[0]
        folder = FUNCTIONS_DIR / name
        if not description.startswith("agentmem ") or not folder.is_dir():
            continue
        found.append(
            (f"{name}: code + layer (unzipped)", _code_bytes(folder) + layer_bytes, LAMBDA_UNZIPPED_LIMIT)
        )
        variables = fn["Properties"].get("Environment", {}).get("Variables", {})
        found.append((f"{name}: environment variables", _environment_bytes(variables), ENVIRONMENT_LIMIT))
    return found


def costs(template: Mapping[str, Any], prices: Mapping[str, float]) -> list[tuple[str, float | None]]:
    lines: list[tuple[str, float | None]] = []

    def hourly(label: str, key: str, count: int) -> None:
        price = prices.get(key)
        lines.append((f"{label} × {count}", None if price is None else price * HOURS_PER_MONTH * count))

    def monthly(label: str, key: str, count: float) -> None:
        price = prices.get(key)
        lines.append((f"{label} × {count:g}", None if price is None else price * count))

    for domain in _of_type(template, "AWS::OpenSearchService::Domain").values():
        cluster = domain["Properties"].get("ClusterConfig", {})
        data = int(cluster.get("InstanceCount", 1))
        hourly(
            f"OpenSearch data node {cluster.get('InstanceType')}",
            f"opensearch:{cluster.get('InstanceType')}",
            data,
        )
        if cluster.get("DedicatedMasterEnabled"):
            kind = cluster.get("DedicatedMasterType")
            hourly(
                f"OpenSearch master node {kind}",
                f"opensearch:{kind}",
                int(cluster.get("DedicatedMasterCount", 0)),
            )
        ebs = domain["Properties"].get("EBSOptions", {})
        if ebs.get("EBSEnabled"):
            monthly(
                "OpenSearch gp3 GiB (per data node)",
                "opensearch-gp3-gib",
                int(ebs.get("VolumeSize", 0)) * data,
            )
    neptune: dict[str, int] = {}
    for instance in _of_type(template, "AWS::Neptune::DBInstance").values():
        kind = instance["Properties"]["DBInstanceClass"]
        neptune[kind] = neptune.get(kind, 0) + 1
    for kind, count in sorted(neptune.items()):
        hourly(f"Neptune instance {kind}", f"neptune:{kind}", count)
    nat = len(_of_type(template, "AWS::EC2::NatGateway"))
    if nat:
        hourly("NAT gateway (hours; data processed is per use)", "nat-gateway", nat)
    interface = [
        e
        for e in _of_type(template, "AWS::EC2::VPCEndpoint").values()
        if e["Properties"].get("VpcEndpointType") == "Interface"
    ]
    if interface:
        per_az = sum(len(e["Properties"].get("SubnetIds", [])) or 1 for e in interface)
        hourly("interface endpoint × AZ", "interface-endpoint-az", per_az)
    keys = len(_of_type(template, "AWS::KMS::Key"))
    if keys:
        monthly("KMS customer managed key", "kms-key", keys)
    alarms = len(_of_type(template, "AWS::CloudWatch::Alarm"))
    if alarms:
        monthly("CloudWatch alarm", "alarm", alarms)
    for acl in _of_type(template, "AWS::WAFv2::WebACL").values():
        monthly("WAF web ACL", "waf-acl", 1)
        monthly("WAF rule", "waf-rule", len(acl["Properties"].get("Rules", [])))
    return lines


def check(
    template: Mapping[str, Any], env: str, *, layer_bytes: int, prices: Mapping[str, float] = PRICES
) -> Preflight:
    result = Preflight(env, prerequisites(template), sizes(template, layer_bytes), costs(template, prices))
    for what, used, limit in result.sizes:
        if used > limit:
            result.problems.append(f"{what}: {used:,} bytes over the limit of {limit:,}")
    for line, cost in result.costs:
        if cost is None:
            result.problems.append(f"no price for {line!r}: add it with --prices")
    return result


def estimated_layer_bytes() -> int:
    """The layer's unzipped size from the installed distributions its pinned requirements resolve
    to (this machine's wheels: an estimate of the arm64 asset) plus ``layers/agentmem``."""
    from agentmem_infra.layer_contents import installed_closure, provided_by_runtime, read_requirements

    total = _code_bytes(INFRA_DIR.parent / "layers" / "agentmem")
    dists, _ = installed_closure(read_requirements())
    for name, dist in dists.items():
        if provided_by_runtime(name):
            continue
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                total += path.stat().st_size
    return total


def render(result: Preflight) -> str:
    out = [f"agentmem {result.env}: before the first deploy", "", "The account needs:"]
    out += [f"  - {line}" for line in result.prerequisites]
    out += ["", "Sizes against Lambda's limits:"]
    for what, used, limit in result.sizes:
        out.append(
            f"  {what:<45} {used / 1e6:8.1f} MB of {limit / 1e6:.1f} ({100 * used / limit:.0f} %)"
            if limit > 10_000
            else f"  {what:<45} {used:8d} B  of {limit} ({100 * used / limit:.0f} %)"
        )
    out += ["", f"Monthly floor with no traffic (prices: {PRICES_AS_OF}):"]
    for line, cost in result.costs:
        out.append(f"  {line:<60} {'   no price' if cost is None else f'{cost:9.2f} USD'}")
    out.append(f"  {'total':<60} {result.monthly_floor:9.2f} USD")
    if result.problems:
        out += ["", "Problems:"] + [f"  ! {p}" for p in result.problems]
    return "\n".join(out)


def synthesize(env: str, context: Iterable[str] = ()) -> dict[str, Any]:
    """The environment's template, synthesized as ``infra_cdk/synth.py --skip-bundling`` does."""
    import os
    import tempfile

    for variable in ("END_OF_LIFE_NODE_VERSION", "UNTESTED_NODE_VERSION", "DEPRECATED_NODE_VERSION"):
        os.environ.setdefault(f"JSII_SILENCE_WARNING_{variable}", "1")
    from aws_cdk import App

    from agentmem_infra.app import build_app

    values = json.loads((INFRA_DIR / "cdk.json").read_text(encoding="utf-8"))["context"]
    values.update({"env": env, "agentmem:skipBundling": "true"})
    for pair in context:
        key, _, value = pair.partition("=")
        values[key] = value
    with tempfile.TemporaryDirectory() as out:
        app = App(context=values, outdir=out)
        stack = build_app(app)
        template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return template


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentmem deploy check", description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--env", default="dev", choices=["dev", "staging", "prod"])
    parser.add_argument("-c", "--context", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--layer", type=Path, help="a built layer asset folder to measure (cdk.out/asset.*)")
    parser.add_argument("--prices", type=Path, help="JSON {key: USD} overriding the price table")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    prices = dict(PRICES)
    if args.prices:
        prices.update(json.loads(args.prices.read_text(encoding="utf-8")))
    layer = _code_bytes(args.layer) if args.layer else estimated_layer_bytes()
    result = check(synthesize(args.env, args.context), args.env, layer_bytes=layer, prices=prices)
    print(json.dumps(result.to_dict(), indent=2) if args.json else render(result))
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(INFRA_DIR))
    raise SystemExit(main())
