"""``Body`` and ``Query`` for the routes' signatures, with Powertools' parameter module imported on
their first call rather than with the routes.

The routes write ``body: Annotated[ContextIn, Body()]`` and ``limit: Annotated[int, Query(ge=1)]``
under postponed annotations: those are strings until Powertools reads a route's signature, on the
first request that reaches the route (its ``dependant``, which validation and the OpenAPI document
both use). Importing ``aws_lambda_powertools.event_handler.openapi.params`` itself imports the
pydantic bridge that builds a model at import, and with it pydantic's plugin discovery
(``importlib.metadata`` and a scan of every installed distribution): ~40 ms of the api handler's
import that no route needs until then. These two functions take the same arguments and return
the same Powertools objects (``params.Body``, ``params.Query``), so a signature reads the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi import params

__all__ = ["Body", "Header", "Query"]


def Body(*args: Any, **kwargs: Any) -> params.Body:
    """``aws_lambda_powertools.event_handler.openapi.params.Body(*args, **kwargs)``."""
    from aws_lambda_powertools.event_handler.openapi.params import Body as PowertoolsBody

    return PowertoolsBody(*args, **kwargs)


def Query(*args: Any, **kwargs: Any) -> params.Query:
    """``aws_lambda_powertools.event_handler.openapi.params.Query(*args, **kwargs)``."""
    from aws_lambda_powertools.event_handler.openapi.params import Query as PowertoolsQuery

    return PowertoolsQuery(*args, **kwargs)


def Header(*args: Any, **kwargs: Any) -> params.Header:
    """``aws_lambda_powertools.event_handler.openapi.params.Header(*args, **kwargs)``."""
    from aws_lambda_powertools.event_handler.openapi.params import Header as PowertoolsHeader

    return PowertoolsHeader(*args, **kwargs)
