"""Unsupported or unknown inputs are refused with a reason, never silently ignored (issue 13):
``tags`` filters ``GET /v1/memories`` (every tag must be on the memory, pages follow the
cursor), an unknown category or audit action is a 422, an unknown query parameter a 400, and
unknown keys in a session state are refused naming them."""

from __future__ import annotations

from typing import Any

import pytest

from agentmem.services import admin

MEMORIES = [
    ("I drink green tea every morning", ["drinks", "Morning"]),
    ("I prefer oolong tea in the afternoon", ["drinks"]),
    ("我每天早上喝绿茶", ["饮品", "早上"]),
    ("我下午喜欢喝乌龙茶", ["饮品"]),
    ("My sister lives in Lyon", ["family"]),
]


@pytest.fixture
def stored(api: Any) -> dict[str, str]:
    ids = {}
    for content, tags in MEMORIES:
        status, body = api("POST", "/v1/memories", {"content": content, "tags": tags})
        assert status == 201, body
        ids[content] = body["memory"]["id"]
    return ids


def _listed(api: Any, *tags: str, limit: int = 50) -> list[str]:
    """Every page of the tag-filtered listing, following next_cursor to the end."""
    contents: list[str] = []
    cursor = None
    for _ in range(50):
        query = {"limit": str(limit), **({"cursor": cursor} if cursor else {})}
        event_query: dict[str, list[str]] = {k: [v] for k, v in query.items()}
        event_query["tags"] = list(tags)
        status, body = api.raw_query("GET", "/v1/memories", event_query)
        assert status == 200, body
        contents += [m["content"] for m in body["memories"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return contents
    raise AssertionError("the listing never ended")


@pytest.fixture
def api_multi(api: Any) -> Any:
    """The api fixture, able to send a repeated query parameter (?tags=a&tags=b)."""
    from agentmem_dev.emulator import events, lambdas

    def raw_query(method: str, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        import json

        event = events.api_gateway_event(method, path, query=query, authorizer=api.auth, headers={})
        result = lambdas.invoke("api", event, api.container)
        return result["statusCode"], json.loads(result["body"])

    api.raw_query = raw_query
    return api


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["drinks"], {"I drink green tea every morning", "I prefer oolong tea in the afternoon"}),
        (["DRINKS", "morning"], {"I drink green tea every morning"}),  # every tag, any case
        (["ｄｒｉｎｋｓ"], {"I drink green tea every morning", "I prefer oolong tea in the afternoon"}),
        (["饮品"], {"我每天早上喝绿茶", "我下午喜欢喝乌龙茶"}),
        (["饮品", "早上"], {"我每天早上喝绿茶"}),
        (["family", "饮品"], set()),
        (["nobody-uses-this"], set()),
    ],
)
@pytest.mark.parametrize("limit", [1, 2, 50])
def test_tags_filter_the_listing_in_both_languages_across_pages(
    api_multi: Any, stored: dict[str, str], tags: list[str], expected: set[str], limit: int
) -> None:
    listed = _listed(api_multi, *tags, limit=limit)
    assert len(listed) == len(set(listed))  # no memory twice across pages
    assert set(listed) == expected


def test_a_rare_tag_answers_short_pages_with_a_cursor_after_the_scan_budget(
    api_multi: Any, stored: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(admin, "TAG_SCAN_BUDGET", 1)  # one store record per request at most
    pages = []
    cursor = None
    while True:
        query = {"tags": ["family"], "limit": ["1"], **({"cursor": [cursor]} if cursor else {})}
        status, body = api_multi.raw_query("GET", "/v1/memories", query)
        assert status == 200, body
        pages.append([m["content"] for m in body["memories"]])
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(pages) >= len(MEMORIES) - 1  # short pages, each with a cursor, until the end
    assert [c for page in pages for c in page] == ["My sister lives in Lyon"]
    assert [] in pages


@pytest.mark.parametrize(
    ("path", "query", "status", "field"),
    [
        ("/v1/memories", {"category": "hobby"}, 422, "category"),
        ("/v1/memories", {"category": "爱好"}, 422, "category"),
        ("/v1/audit", {"action": "viewed"}, 422, "action"),
        ("/v1/memories", {"tags": "x" * 65}, 422, "tags"),
        ("/v1/memories", {"tag": "drinks"}, 400, None),
        ("/v1/memories", {"标签": "饮品"}, 400, None),
    ],
)
def test_unknown_filters_are_refused_with_a_reason(
    api: Any, path: str, query: dict[str, str], status: int, field: str | None
) -> None:
    got, body = api("GET", path, query=query)
    assert got == status, body
    assert body["error"] == "invalid_request" and body["message"]
    if field is None:
        assert next(iter(query)) in body["message"]
    else:
        assert field in {d["loc"][1] for d in body["details"]}


@pytest.mark.parametrize(
    ("state", "path"),
    [
        ({"plan": {"goal": "move house"}, "mood": "happy"}, "mood"),
        ({"plan": {"goal": "搬家", "优先级": "高"}}, "plan.优先级"),
        ({"tool_state": {"recent_calls": [], "cache": {}}}, "tool_state.cache"),
        ({"task_memory": ["pack"], "notes": ["记得带护照"]}, "notes"),
    ],
)
def test_unknown_keys_in_a_session_state_are_refused_naming_them(
    api: Any, state: dict[str, Any], path: str
) -> None:
    status, body = api("PUT", "/v1/sessions/s1/state", state)
    assert status == 422, body
    named = {".".join(d["loc"][1:]) for d in body["details"] if d["type"] == "extra_forbidden"}
    assert path in named
    assert api("GET", "/v1/sessions/s1/state")[0] == 404  # nothing stored
