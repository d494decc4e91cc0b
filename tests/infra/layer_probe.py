"""Run inside a Python started with ``-I -S`` (no site-packages): the Lambda layer's packages, the
runtime's SDK and a function's folder are the only things importable, as on AWS.

Argument: a JSON file ``{"path": [...], "functions": {name: dir}, "confined": {top: [prefixes]},
"events": {"ingest": event, "api": [event, ...]}}``. Prints one JSON object: the modules that
failed to import (and why), and what each handler answered. Stdlib only until ``path`` is set.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import sys
import traceback
import uuid


class Context:
    """What Powertools reads from a Lambda context."""

    function_name = "probe"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:probe"

    def __init__(self) -> None:
        self.aws_request_id = str(uuid.uuid4())

    def get_remaining_time_in_millis(self) -> int:
        return 600_000


def allowed(module: str, missing: str, confined: dict[str, list[str]]) -> bool:
    prefixes = confined.get(missing.split(".", 1)[0], [])
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def import_all(confined: dict[str, list[str]]) -> list[dict[str, str]]:
    import agentmem

    failures = []
    for info in pkgutil.walk_packages(agentmem.__path__, "agentmem."):
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            if not allowed(info.name, exc.name or "", confined):
                failures.append({"module": info.name, "error": f"ModuleNotFoundError: {exc.name}"})
        except Exception as exc:  # anything else a module raises on import is a failure too
            failures.append({"module": info.name, "error": f"{type(exc).__name__}: {exc}"})
    # Powertools' tracer (the functions run with tracing on) needs the extra's packages
    for name in ("aws_xray_sdk.core", "aws_lambda_powertools.tracing"):
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures.append({"module": name, "error": f"{type(exc).__name__}: {exc}"})
    return failures


def load_handler(name: str, folder: str) -> object:
    spec = importlib.util.spec_from_file_location(f"handler_{name}", f"{folder}/handler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    sys.path[:0] = config["path"]
    out: dict[str, object] = {"failures": import_all(config["confined"]), "handlers": {}, "answers": {}}
    handlers = {}
    for name, folder in config["functions"].items():
        try:
            handlers[name] = load_handler(name, folder)
        except Exception as exc:
            out["failures"].append({"module": f"functions/{name}/handler.py", "error": repr(exc)})  # type: ignore[attr-defined]
    events = config.get("events", {})
    answers: dict[str, object] = {}
    try:
        if "ingest" in events:
            answers["ingest"] = handlers["ingest"].handler(events["ingest"], Context())  # type: ignore[attr-defined]
        answers["api"] = [handlers["api"].handler(e, Context()) for e in events.get("api", [])]  # type: ignore[attr-defined]
    except Exception:
        answers["error"] = traceback.format_exc()
    out["answers"] = answers
    print(json.dumps(out))


if __name__ == "__main__":
    main()
