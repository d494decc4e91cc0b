"""The request in progress, as routes see it: the container it runs against (set by
:func:`agentmem.api.app.resolve`), the caller, the time and the request id. One instance per
route module, bound to that module's router.

Bounded input: :func:`check_json_body` and :func:`unknown_query_parameters` are the gates
:func:`agentmem.api.app.resolve` runs before any route, so hostile shapes (deep nesting, huge
number literals, NaN, invalid Unicode, unknown parameters) come back as a 400 with a reason, never
a 500."""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.api_gateway import Response, Router
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from agentmem.api.auth import Principal, principal_from
from agentmem.domain.models import Scope

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
IDEMPOTENCY_DOC = (
    "Makes a retry safe: a request repeated with the same key (1-255 printable ASCII characters, no"
    " comma; per tenant and user; kept AGENTMEM_IDEMPOTENCY_TTL_HOURS, default 24) returns the first"
    " answer (header Idempotent-Replayed: true) instead of writing again; the same key with another"
    " body is refused with 422 idempotency_key_reused. The Python client sends one by default."
)

if TYPE_CHECKING:  # the services are built by the container, not imported by the routes
    from agentmem.bootstrap import Container


@dataclass(frozen=True)
class RequestContext:
    router: Router

    def container(self) -> Container:
        container: Container = self.router.context["container"]
        return container

    def event(self) -> APIGatewayProxyEvent:
        """The API Gateway REST proxy event in progress (the resolver is an APIGatewayRestResolver)."""
        event = self.router.current_event
        assert isinstance(event, APIGatewayProxyEvent)
        return event

    def principal(self, permission: str = "memory:read") -> Principal:
        """The caller, from the authorizer context only, holding ``permission`` (else 401/403)."""
        ctx = self.event().request_context
        p = principal_from(ctx.authorizer.raw_event if ctx.authorizer else None)
        p.require(permission)
        return p

    def now(self, at: datetime | None = None) -> datetime:
        return at or self.container().clock.now()

    def request_id(self) -> str:
        return self.event().request_context.request_id or uuid.uuid4().hex

    def body(self) -> str:
        return self.event().body or ""

    def header(self, name: str) -> str | None:
        """A request header by name, any case (None when absent)."""
        wanted = name.lower()
        for key, value in (self.event().headers or {}).items():
            if str(key).lower() == wanted:
                return str(value)
        return None

    def idempotent(self, scope: Scope, work: Callable[[str, datetime], tuple[int, str]]) -> Response[str]:
        """Run ``work(request_id, now)`` -> (status, JSON body) once per ``Idempotency-Key`` of
        the caller (:class:`agentmem.services.idempotency.IdempotentRequests`); a replayed answer
        carries ``Idempotent-Replayed: true``. Without the header, ``work`` simply runs."""
        from agentmem.services.idempotency import fingerprint  # loaded with the container anyway

        event = self.event()
        answer = self.container().idempotency.run(
            scope,
            self.header(IDEMPOTENCY_HEADER),
            fingerprint(event.http_method, event.path, self.body()),
            request_id=self.request_id(),
            now=self.now(),
            work=work,
        )
        headers = {REPLAYED_HEADER: "true"} if answer.replayed else {}
        return Response(answer.status, "application/json", answer.body, headers=headers)


# ---------------------------------------------------------------------------- bounded input

MAX_JSON_DEPTH = 32  # nesting of arrays/objects in a request body (the deepest model needs ~6)
MAX_NUMBER_CHARS = 40  # characters of one JSON number literal (int64 has 19 digits)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_NUMBER = re.compile(r"-?\d[\d.eE+\-]*")


class BodyRefused(ValueError):
    """A request body that no route can accept, with the reason (a 400)."""


def _depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside string literals (no recursion, linear)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _refuse_constant(name: str) -> Any:
    raise BodyRefused(f"{name} is not a JSON number")


def _bounded_int(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise BodyRefused(f"a number literal is longer than {MAX_NUMBER_CHARS} characters")
    return int(literal)


def _finite_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise BodyRefused(f"a number literal is longer than {MAX_NUMBER_CHARS} characters")
    value = float(literal)
    if not math.isfinite(value):
        raise BodyRefused("a number is out of range (not finite)")
    return value


def check_json_body(body: str) -> None:
    """Refuse (:class:`BodyRefused`) a body that is JSON no model could take and that would
    otherwise fail deep in a parser or a store: nesting beyond :data:`MAX_JSON_DEPTH` (Python's
    json raises RecursionError), number literals longer than :data:`MAX_NUMBER_CHARS` (ValueError
    past 4,300 digits), ``NaN`` / ``Infinity`` and numbers that overflow to infinity, and a lone
    surrogate anywhere — raw or as a ``\\ud800`` escape, in a key or a value of any field — which
    is no Unicode text (UTF-8 cannot encode it: a store would fail on it). A body that is simply
    not JSON is left to the route's validation (its own 400)."""
    if not body.strip():
        return
    if _depth(body) > MAX_JSON_DEPTH:
        raise BodyRefused(f"the body is nested deeper than {MAX_JSON_DEPTH} levels")
    if not _is_unicode(body):
        raise BodyRefused(_SURROGATE_REASON)
    try:
        parsed = json.loads(
            body, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float
        )
    except BodyRefused:
        raise
    except RecursionError as exc:  # belt and braces: the depth scan should have caught it
        raise BodyRefused("the body is nested too deeply") from exc
    except ValueError:
        return  # not JSON (JSONDecodeError) or a bad literal: the route answers its own 400/422
    if "\\u" in body and not all(_is_unicode(text) for text in _strings(parsed)):
        raise BodyRefused(_SURROGATE_REASON)


_SURROGATE_REASON = "the body holds invalid Unicode (a lone surrogate)"


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is Unicode text UTF-8 can encode (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _strings(value: Any) -> Iterable[str]:
    """Every string of parsed JSON, object keys included (no recursion: depth is bounded, but a
    wide body is walked with a stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            yield from item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def unknown_query_parameters(
    allowed: Mapping[tuple[str, str], frozenset[str]], method: str, path: str, names: Iterable[str]
) -> list[str]:
    """The query parameter names that the route matching ``method`` and ``path`` does not
    declare (``allowed`` maps (method, path template) to its declared names; templates use
    ``{name}`` segments). Empty when no route matches (the resolver answers 404/405)."""
    segments = path.rstrip("/").split("/")
    for route_method, template in allowed:  # only the matching route's names are looked up
        parts = template.rstrip("/").split("/")
        if route_method != method.upper() or len(parts) != len(segments):
            continue
        if all(
            p == s or (p.startswith("{") and p.endswith("}") and s)
            for p, s in zip(parts, segments, strict=True)
        ):
            return sorted(set(names) - allowed[(route_method, template)])
    return []
