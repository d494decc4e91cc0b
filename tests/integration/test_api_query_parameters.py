"""The query parameters each route declares, as the API's gate reads them (from each route's
Powertools dependant, one route at a time) are those of the OpenAPI document, for every route."""

from __future__ import annotations

import json

from agentmem.api.app import _DeclaredQueryParameters, app, declared_query_parameters, openapi_json
from agentmem.api.request import unknown_query_parameters


def _from_document() -> dict[tuple[str, str], frozenset[str]]:
    document = json.loads(openapi_json())
    declared: dict[tuple[str, str], frozenset[str]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            names = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
            declared[(method.upper(), path)] = frozenset(names)
    return declared


def test_every_route_declares_the_query_parameters_of_the_openapi_document() -> None:
    declared = declared_query_parameters()
    expected = _from_document()
    # Routes kept out of the document (the inspector's static files) are gated all the same.
    hidden = {
        (route.method.upper(), route.openapi_path)
        for route in [*app._static_routes, *app._dynamic_routes]
        if not route.include_in_schema
    }
    assert {("GET", "/ui"), ("GET", "/ui/{asset}")} <= hidden
    assert set(declared) - hidden == set(expected)
    assert {key: declared[key] for key in declared if key not in hidden} == expected
    assert expected[("GET", "/v1/memories")] >= {"status", "category", "limit", "cursor"}


def test_only_the_matching_route_is_analysed() -> None:
    declared = _DeclaredQueryParameters([*app._static_routes, *app._dynamic_routes])
    assert unknown_query_parameters(
        declared, "DELETE", "/v1/memories/01KE6P4YM0AGDWN18MDS7D5GTR", ["hard", "x"]
    ) == ["x"]
    assert list(declared._names) == [("DELETE", "/v1/memories/{memory_id}")]
    assert (
        unknown_query_parameters(declared, "GET", "/v1/nowhere", ["x"]) == []
    )  # no route: the resolver's 404
