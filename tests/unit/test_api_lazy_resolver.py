"""The api's Powertools resolver is built on first use, once per process even when the first
requests arrive together; the routes' ``Body`` / ``Query`` are Powertools' own, made on the first
reading of a signature (agentmem.api.params)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from aws_lambda_powertools.event_handler.openapi import params as powertools

from agentmem.api.params import Body, Query


@pytest.mark.parametrize("description", ["Repeat for several tags.", "可重复：每个标签都要有。"])
def test_query_and_body_are_the_powertools_parameters(description: str) -> None:
    query = Query(ge=1, le=200, description=description)
    assert isinstance(query, powertools.Query)
    assert query.description == description
    assert [type(m).__name__ for m in query.metadata] == ["Ge", "Le"]
    body = Body(description=description)
    assert isinstance(body, powertools.Body) and body.description == description


def test_the_resolver_is_built_once_when_the_first_calls_race() -> None:
    code = textwrap.dedent(
        """
        import threading
        from agentmem.api import app as module
        assert module._built == []
        barrier = threading.Barrier(8)
        got = []
        def first_call():
            barrier.wait()
            got.append(module.resolver())
        threads = [threading.Thread(target=first_call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(got) == 8 and len({id(r) for r in got}) == 1, got
        assert all(router.api_resolver is got[0] for router in module.ROUTERS)
        from agentmem.api.app import app
        assert app is got[0]
        routes = {(r.method, r.rule.pattern) for r in [*app._static_routes, *app._dynamic_routes]}
        assert len(routes) == len(app._static_routes) + len(app._dynamic_routes) > 20  # each route once
        print("ok")
        """
    )
    environ = {**os.environ, "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
