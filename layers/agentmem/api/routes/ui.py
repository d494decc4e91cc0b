"""``GET /ui`` and ``GET /ui/{asset}``: the memory inspector, three static files shipped inside
the package (``agentmem/api/ui``: ``index.html``, ``app.js``, ``style.css``; no build step).

The files themselves need no caller (they hold no data): every data call the page makes goes to
the ``/v1`` routes with the same auth as any client (the bearer token typed into the page, or
the local server's loopback scope headers). Only the names in :data:`ASSETS` are served — the
asset segment is looked up, never joined to a path, so there is no traversal — anything else is
a 404. Every answer carries a strict Content-Security-Policy (scripts, styles and fetches from
this origin only, no inline code, no framing). The routes are kept out of the OpenAPI document:
they are a page, not part of the API.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Response, Router

from agentmem.errors import NotFound

router = Router()

UI_PREFIX = "/ui"
INDEX = "index.html"
# asset name -> its content type: the only files served.
ASSETS: dict[str, str] = {
    INDEX: "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


def is_ui_path(path: str) -> bool:
    """Whether ``path`` addresses the inspector's static files (``/ui`` or ``/ui/<name>``): the
    local server serves those without asking for a scope."""
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")


@cache
def asset_text(name: str) -> str:
    """The text of the shipped asset ``name`` (one of :data:`ASSETS`); raises NotFound otherwise."""
    if name not in ASSETS:
        raise NotFound(f"no inspector asset named {name[:64]!r}")
    from importlib import resources  # with the first file asked for: it imports tempfile and shutil

    return (resources.files("agentmem.api") / "ui" / name).read_text(encoding="utf-8")


def _asset(name: str) -> Response[Any]:
    body = asset_text(name)  # NotFound (404) for a name that is not a shipped asset
    return Response(status_code=200, content_type=ASSETS[name], body=body, headers=dict(SECURITY_HEADERS))


@router.get(UI_PREFIX, include_in_schema=False)
def get_ui() -> Response[Any]:
    return _asset(INDEX)


@router.get(UI_PREFIX + "/<asset>", include_in_schema=False)
def get_ui_asset(asset: str) -> Response[Any]:
    return _asset(asset)
