"""The inspector's static files through the api λ and the local server: served from the package
with their content types and a strict CSP, no caller needed, nothing but the shipped names
(traversal, unknown names: 404), kept out of the OpenAPI document; and the page never turns
data into HTML (memory content is untrusted)."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from agentmem.api.routes.ui import ASSETS, CONTENT_SECURITY_POLICY, is_ui_path
from agentmem.bootstrap import Container, bootstrap
from agentmem.settings import load_settings
from agentmem_dev.emulator import events, lambdas
from agentmem_dev.emulator.server import make_server


def get(container: Container, path: str, authorizer: dict[str, Any] | None = None) -> dict[str, Any]:
    event = events.api_gateway_event("GET", path, authorizer=authorizer)
    result: dict[str, Any] = lambdas.invoke("api", event, container)
    return result


@pytest.mark.parametrize(
    ("path", "content_type", "marker"),
    [
        ("/ui", "text/html", "<title>agentmem inspector</title>"),
        ("/ui/index.html", "text/html", 'src="/ui/app.js"'),
        ("/ui/app.js", "text/javascript", '"use strict"'),
        ("/ui/style.css", "text/css", ":root"),
    ],
)
def test_the_assets_are_served_without_a_caller(
    container: Container, path: str, content_type: str, marker: str
) -> None:
    result = get(container, path)  # no authorizer context at all: the files hold no data
    headers = {k.lower(): v for k, v in (result.get("headers") or {}).items()}
    headers |= {k.lower(): ",".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
    assert result["statusCode"] == 200
    assert headers["content-type"].startswith(content_type) and "charset=utf-8" in headers["content-type"]
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert marker in result["body"]


def test_the_policy_allows_nothing_inline_nor_foreign() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    for name in ("script-src", "style-src", "connect-src"):
        assert directives[name] == "'self'", name  # no 'unsafe-inline', no CDN, no other origin


@pytest.mark.parametrize(
    "path",
    [
        "/ui/missing.js",
        "/ui/..%2Fapp.py",
        "/ui/%2e%2e%2f%2e%2e%2fsettings.py",
        "/ui/../routes/ui.py",
        "/ui/app.js/extra",
        "/ui/INDEX.HTML",
        "/ui/界面.html",
    ],
)
def test_only_the_shipped_names_are_served(container: Container, path: str) -> None:
    result = get(container, path)
    assert result["statusCode"] == 404
    assert json.loads(result["body"])["error"] == "not_found"


def test_the_ui_is_not_in_the_openapi_document(container: Container) -> None:
    document = json.loads(get(container, "/v1/openapi.json")["body"])
    assert not [path for path in document["paths"] if path.startswith("/ui")]
    assert "/v1/memories" in document["paths"]  # the document itself is still whole


def test_every_asset_ships_inside_the_package() -> None:
    folder = resources.files("agentmem.api") / "ui"
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == sorted(ASSETS)


def test_the_page_never_parses_data_as_html() -> None:
    folder = resources.files("agentmem.api") / "ui"
    script = (folder / "app.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<script>|\son\w+=|style=", page)  # the CSP would block inline code anyway
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing from another origin


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/ui", True), ("/ui/app.js", True), ("/uix", False), ("/v1/ui", False), ("/", False)],
)
def test_is_ui_path(path: str, expected: bool) -> None:
    assert is_ui_path(path) is expected


# ---------------------------------------------------------------------------- the local server


@pytest.fixture
def token_server(container: Container) -> Iterator[str]:
    settings = load_settings(data_dir=container.settings.data_dir, embedder="hash", api_token="ui-token-1")
    httpd = make_server("127.0.0.1", 0, bootstrap(settings, container.adapters, container.clock))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def status_of(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_token_server_serves_the_page_but_not_the_data_without_the_token(token_server: str) -> None:
    assert status_of(token_server + "/ui") == 200
    assert status_of(token_server + "/ui/app.js") == 200
    assert status_of(token_server + "/ui/secret.txt") == 404
    scope = {"X-Tenant-Id": "t1", "X-User-Id": "u1"}
    assert status_of(token_server + "/v1/memories", headers=scope) == 401  # the data still needs it
    with_token = {**scope, "Authorization": "Bearer ui-token-1"}
    assert status_of(token_server + "/v1/memories", headers=with_token) == 200
    # only GET passes through: a write under /ui is routed (and authorized) like any other request
    assert status_of(token_server + "/ui", method="POST") == 401
