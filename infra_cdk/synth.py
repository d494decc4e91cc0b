#!/usr/bin/env python3
"""Synthesize without the CDK CLI (``make synth``, CI): ``cdk.json``'s context, then ``-c`` pairs.

    python infra_cdk/synth.py --env prod --skip-bundling [--out DIR] [-c key=value ...]

Exits non-zero when synthesis fails, cdk-nag findings included, and prints one line per stack.
The CLI (``npx aws-cdk@2 synth -c env=prod``) does the same and is what ``deploy`` needs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="dev", choices=["dev", "staging", "prod"])
    parser.add_argument("--skip-bundling", action="store_true", help="plain source assets, no pip")
    parser.add_argument("--out", default=None, help="cloud assembly folder (default cdk.out/<env>)")
    parser.add_argument("-c", "--context", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)

    from aws_cdk import App

    from agentmem_infra.app import build_app

    context = json.loads((HERE / "cdk.json").read_text(encoding="utf-8"))["context"]
    context["env"] = args.env
    if args.skip_bundling:
        context["agentmem:skipBundling"] = "true"
    for pair in args.context:
        key, _, value = pair.partition("=")
        context[key] = value
    out = Path(args.out) if args.out else HERE / "cdk.out" / args.env
    app = App(context=context, outdir=str(out))
    stack = build_app(app)
    try:
        assembly = app.synth()
    except Exception as exc:  # jsii surfaces validation failures as RuntimeError
        print(f"synth failed: {exc}", file=sys.stderr)
        return 1
    template = assembly.get_stack_by_name(stack.stack_name).template
    nag = "cdk-nag clean" if str(context.get("agentmem:nag", "true")).lower() != "false" else "cdk-nag off"
    print(f"{stack.stack_name}: {len(template['Resources'])} resources, {nag} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
