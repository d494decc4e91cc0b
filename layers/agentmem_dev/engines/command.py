"""``agentmem engines fetch|up|down|status|env``: the command behind ``make engines``."""

from __future__ import annotations

import argparse
import json
import sys

from agentmem_dev.engines.maven import FetchFailed, fetch
from agentmem_dev.engines.runner import NAMES, default_cache, down, status, up
from agentmem_dev.engines.servers import EngineUnavailable


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    engines = sub.add_parser(
        "engines", help="real engines on 127.0.0.1: OpenSearch + k-NN, Gremlin Server, DynamoDB/SQS"
    )
    engines.add_argument("action", choices=["fetch", "up", "down", "status", "env"])
    engines.add_argument(
        "--only", help=f"comma-separated subset of {','.join(NAMES)} (default: all)", default=""
    )
    engines.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cache = default_cache()
    names = [n for n in args.only.split(",") if n] or list(NAMES)
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        print(f"agentmem engines: unknown engine(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        if args.action == "fetch":
            got = fetch(cache)
            print(f"[engines] cache {cache}: {'fetched ' + ', '.join(got) if got else 'up to date'}")
            return 0
        if args.action == "up":
            fetch(cache)
            state = up(cache, names)
            print(json.dumps(state, indent=2))
            print("# point a shell at them:", *(f"export {k}={v}" for k, v in _env(state).items()), sep="\n")
            return 0
        if args.action == "down":
            print("[engines] stopped" if down(cache) else "[engines] none running")
            return 0
        recorded = status(cache)
        if recorded is None:
            print("[engines] none running", file=sys.stderr)
            return 1
        if args.action == "env":
            print("\n".join(f"export {k}={v}" for k, v in _env(recorded).items()))
        else:
            print(json.dumps(recorded, indent=2))
        return 0
    except (FetchFailed, EngineUnavailable) as exc:
        print(f"agentmem engines: {exc}", file=sys.stderr)
        return 1


def _env(state: dict[str, object]) -> dict[str, str]:
    env = state.get("env", {})
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
