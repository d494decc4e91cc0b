"""The memory inspector end to end: a live ``agentmem serve`` (in-process, temp data dir, hashed
embedder), memories seeded through the API (explicit writes, Chinese and English), then Debian's
Chromium (``/usr/bin/chromium``, headless) driven by Playwright's Python package: connect, list,
filter, search, explain a recall, open a history, pin (cancelled once, then confirmed), delete,
read the audit trail, the helpers' routes (or "not available on this server"), erase the user.
Memory content is untrusted: a memory that looks like HTML must render as text.

Screenshots land in ``reports/screenshots/`` (git-ignored test artefacts); with
``INSPECTOR_SCREENSHOT=docs`` the recall one is also copied to ``docs/img/inspector.png`` (the
README's picture; not an ``AGENTMEM_*`` name: the server refuses unknown ones). Skipped, with
the reason, where Chromium or Playwright is absent; Playwright never downloads a browser here
(no ``playwright install``). The tests share one server and run in order on one xdist worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("INSPECTOR_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = ROOT / "reports" / "screenshots"
DOCS_PICTURE = ROOT / "docs" / "img" / "inspector.png"
WAIT_MS = 30_000  # how long a locator may take to appear (a bound on waiting, not an assertion)

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the Python playwright package is not installed (pip install playwright)"
)
sync_api.expect.set_options(timeout=WAIT_MS)
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    ),
    pytest.mark.xdist_group("inspector"),  # one server, the tests in order (the last one erases)
]

TENANT, USER = "inspect", "mei"
SEEDS = [
    {"content": "我对花生过敏，吃了会起疹子。", "category": "preference"},
    {"content": "我喜欢喝乌龙茶，不加糖。", "category": "preference"},
    {"content": "I live in Lisbon and work night shifts as a nurse.", "category": "identity"},
    {"content": "Prefers short answers with one code example.", "category": "preference"},
    {"content": '<img src=x onerror="document.title=1">I edit code in Vim.', "category": "fact"},
]


def call(base: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"X-Tenant-Id": TENANT, "X-User-Id": USER, "Content-Type": "application/json"}
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    return status, json.loads(raw) if raw else None


@contextlib.contextmanager
def serving(folder: Path, **settings: str) -> Iterator[str]:
    """``agentmem serve`` in its own process on a free port, like a user starts it; its URL."""
    log = folder / "serve.log"
    env = {
        **os.environ,
        "AGENTMEM_EMBEDDER": "hash",
        **settings,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers"), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "agentmem_dev.cli", "serve", "--port", "0", "--workers", "0"]
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [*command, "--data-dir", str(folder / "data")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()  # printed once the server listens
        assert "serving on http://127.0.0.1:" in banner, log.read_text()[-2000:]
        yield "http://127.0.0.1:" + banner.split("http://127.0.0.1:")[1].split()[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(tmp_path_factory.mktemp("ui")) as url:
        yield url


@pytest.fixture(scope="module")
def seeded(server: str) -> dict[str, str]:
    """content -> memory id of the seeds, once each is searchable (the projector is asynchronous)."""
    ids = {}
    for seed in SEEDS:
        status, body = call(server, "POST", "/v1/memories", seed)
        assert status == 201, body
        ids[seed["content"]] = body["memory"]["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, body = call(server, "POST", "/v1/recall", {"query": "乌龙茶", "k": 10})
        if status == 200 and ids[SEEDS[1]["content"]] in [m["id"] for m in body["memories"]]:
            break
        time.sleep(0.1)
    return ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: Any) -> None:
        # Chromium logs every non-2xx answer ("Failed to load resource"); the page expects some
        # (a 404 from a route not merged here). Anything else (a CSP refusal, a script error) counts.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            problems.append(f"console {message.type}: {message.text}")

    page.on("console", on_console)
    page.problems = problems
    try:
        yield page
    finally:
        context.close()


def shot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"inspector-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def route_exists(server: str, path: str) -> bool:
    status, document = call(server, "GET", "/v1/openapi.json")
    assert status == 200
    return path in document["paths"]


def schema(server: str, name: str) -> dict[str, Any]:
    status, document = call(server, "GET", "/v1/openapi.json")
    assert status == 200
    found: dict[str, Any] = document["components"]["schemas"].get(name, {})
    return found


def row(page: Any, content: str) -> Any:
    return page.locator("#memories tbody tr", has_text=content)


def confirm(page: Any, accept: bool) -> None:
    dialog = page.locator("#confirm")
    sync_api.expect(dialog).to_be_visible()
    page.locator("#confirm-ok" if accept else "#confirm-cancel").click()
    sync_api.expect(dialog).to_be_hidden()


def test_the_inspector_end_to_end(page: Any, server: str, seeded: dict[str, str]) -> None:
    expect = sync_api.expect
    response = page.goto(server + "/ui")
    assert response is not None and response.status == 200
    assert "default-src 'none'" in response.headers["content-security-policy"]
    expect(page.locator("#base-url")).to_have_value(server)

    # connect: the loopback scope headers (no token configured)
    page.fill("#tenant", TENANT)
    page.fill("#user", USER)
    page.click("#connect")
    expect(page.locator("#status")).to_contain_text("Connected")
    rows = page.locator("#memories tbody tr")
    expect(rows).to_have_count(len(SEEDS))
    for seed in SEEDS:
        expect(row(page, seed["content"])).to_have_count(1)
    # untrusted content stays text: the img tag is shown, never parsed into an element
    assert page.locator("#memories img").count() == 0
    expect(row(page, "I edit code in Vim.")).to_contain_text("<img src=x")
    shot(page, "list")

    # filter by category, then by layer (nothing permanent yet)
    page.select_option("#filter-category", "preference")
    expect(rows).to_have_count(3)
    page.select_option("#filter-category", "")
    page.select_option("#filter-layer", "permanent")
    expect(page.locator("#memories-note")).to_contain_text("No memories match")
    page.select_option("#filter-layer", "")
    expect(rows).to_have_count(len(SEEDS))

    # search (a recall) and explain the best match: score components and the channels
    page.fill("#search", "乌龙茶")
    page.click("#apply-filters")
    expect(page.locator("#memories-note")).to_contain_text("recalled for “乌龙茶”")
    expect(rows.first).to_contain_text("我喜欢喝乌龙茶")
    rows.first.locator("button.link").click()
    expect(page.locator("#explain")).to_be_visible()
    expect(page.locator("#explain-score")).to_contain_text("Score 0.")
    expect(page.locator("#explain-components tbody tr").first).to_be_visible()
    components = page.locator("#explain-components tbody td:first-child").all_text_contents()
    assert "semantic" in components and "lexical" in components, components
    channels = page.locator("#explain-channels .badge").all_text_contents()
    assert "keyword" in channels, channels  # 乌龙茶 is in the text: the keyword channel found it
    picture = shot(page, "recall-explained")
    if os.environ.get("INSPECTOR_SCREENSHOT") == "docs":
        DOCS_PICTURE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(picture, DOCS_PICTURE)

    # time travel: nothing was valid long before the seeds (or "not available" before the merge)
    page.fill("#as-of", "2020-01-01T00:00:00")
    page.click("#apply-filters")
    if "as_of" in schema(server, "RecallIn").get("properties", {}):
        expect(page.locator("#memories-note")).to_contain_text("0 recalled for “乌龙茶” as of 2020-01-01")
    else:
        expect(page.locator("#memories-note")).to_have_text(
            "Time travel (as of): not available on this server."
        )
    expect(rows).to_have_count(0)
    page.fill("#as-of", "")

    # the supersede history of a memory (helper D's route; "not available" where it is absent)
    page.fill("#search", "")
    page.click("#apply-filters")
    expect(rows).to_have_count(len(SEEDS))
    lisbon = "I live in Lisbon"
    row(page, lisbon).get_by_role("button", name="History").click()
    expect(page.locator("#history")).to_be_visible()
    if route_exists(server, "/v1/memories/{memory_id}/history"):
        expect(page.locator("#history-entries li")).to_have_count(1)
        expect(page.locator("#history-entries li")).to_contain_text(lisbon)
    else:
        expect(page.locator("#history-note")).to_have_text("History: not available on this server.")
    shot(page, "history")

    # pin: cancelled once (nothing changes), then confirmed
    tea_id = seeded[SEEDS[1]["content"]]
    tea = row(page, "乌龙茶")
    tea.get_by_role("button", name="Pin").click()
    expect(page.locator("#confirm-text")).to_contain_text("Pin this memory?")
    confirm(page, accept=False)
    expect(page.locator("#status")).to_contain_text("cancelled")
    assert call(server, "GET", f"/v1/memories/{tea_id}")[1]["pinned"] is False
    tea.get_by_role("button", name="Pin").click()
    confirm(page, accept=True)
    expect(page.locator("#status")).to_contain_text("Pin: done")
    expect(row(page, "乌龙茶").locator(".badge")).to_have_text("pinned")
    assert call(server, "GET", f"/v1/memories/{tea_id}")[1]["pinned"] is True

    # delete one: gone from the active list, listed under deleted
    nurse_id = seeded[SEEDS[2]["content"]]
    row(page, lisbon).get_by_role("button", name="Delete").click()
    confirm(page, accept=True)
    expect(page.locator("#status")).to_contain_text("Delete: done")
    expect(rows).to_have_count(len(SEEDS) - 1)
    assert call(server, "GET", f"/v1/memories/{nurse_id}")[0] == 404  # a deleted memory is not served
    page.select_option("#filter-status", "deleted")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(lisbon)
    expect(rows.first.get_by_role("button", name="Delete")).to_have_count(0)

    # the audit trail shows both changes, newest first
    page.click(".tab[data-view=audit]")
    audit = page.locator("#audit tbody tr")
    expect(audit.first).to_be_visible()
    expect(page.locator("#audit tbody tr", has_text="deleted").filter(has_text=nurse_id)).to_have_count(1)
    expect(page.locator("#audit tbody tr", has_text="patched").filter(has_text=tea_id)).to_have_count(1)
    page.fill("#audit-action", "written")
    page.click("#audit-filters button[type=submit]")
    expect(audit).to_have_count(len(SEEDS))
    shot(page, "audit")

    # pending conflicts and dead letters: an empty list, or "not available" before the merge
    for view, path, note, what in (
        ("conflicts", "/v1/conflicts", "#conflicts-note", "Conflicts"),
        ("dead-letters", "/v1/dead-letters", "#dead-letters-note", "Dead letters"),
    ):
        page.click(f".tab[data-view={view}]")
        if route_exists(server, path):
            expect(page.locator(note)).to_contain_text("No ")
        else:
            expect(page.locator(note)).to_have_text(f"{what}: not available on this server.")

    assert page.problems == []


def connect(page: Any, server: str, token: str = "") -> None:
    page.goto(server + "/ui")
    page.fill("#token", token)
    page.fill("#tenant", TENANT)
    page.fill("#user", USER)
    page.click("#connect")


def fulfil(route: Any, body: Any, status: int = 200) -> None:
    route.fulfill(status=status, content_type="application/json", body=json.dumps(body, ensure_ascii=False))


def test_the_helpers_routes_as_their_contracts_give_them(
    page: Any, server: str, seeded: dict[str, str]
) -> None:
    """History, conflicts and dead letters exactly as contracts.md shapes them, the browser's
    network answering for the server: the page reads those fields and sends those bodies."""
    expect = sync_api.expect
    tea_id = seeded[SEEDS[1]["content"]]
    older = {
        "memory_id": "01OLDERTEA0000000000000000",
        "content": "我喜欢喝绿茶。",
        "category": "preference",
        "layer": "long_term",
        "status": "superseded",
        "valid_from": "2026-11-01T08:00:00Z",
        "valid_to": "2026-12-01T08:00:00Z",
        "created_at": "2026-11-01T08:00:00Z",
        "updated_at": "2026-12-01T08:00:00Z",
        "supersedes": [],
        "superseded_by": tea_id,
        "source": "user",
        "confidence": "confirmed",
        "pinned": False,
        "version": 2,
    }
    current = {
        **older,
        "memory_id": tea_id,
        "content": SEEDS[1]["content"],
        "status": "active",
        "valid_from": "2026-12-01T08:00:00Z",
        "valid_to": None,
        "supersedes": [older["memory_id"]],
        "superseded_by": None,
        "version": 1,
    }
    conflict = {
        "conflict_id": "c-1",
        "memory_id": tea_id,
        "existing": SEEDS[1]["content"],
        "proposed": "I don't drink tea any more, only coffee.",
        "status": "pending",
        "created_at": "2026-12-01T09:00:00Z",
        "resolved_at": None,
        "message_id": "m-9",
        "new_memory_id": None,
    }
    letter = {
        "message_id": "turn-42",
        "session_id": "s-7",
        "reason": "embedder unavailable",
        "attempts": 5,
        "failed_at": "2026-12-01T10:00:00Z",
    }
    sent: list[tuple[str, str, Any]] = []

    def history(route: Any) -> None:
        fulfil(route, {"memory_id": tea_id, "entries": [older, current]})

    def conflicts(route: Any) -> None:
        request = route.request
        if request.method == "POST":
            sent.append((request.method, request.url, request.post_data_json))
            conflict.update(status="confirmed", resolved_at="2026-12-01T11:00:00Z", new_memory_id="m-new")
            return fulfil(route, conflict)
        wanted = re.search(r"status=(\w+)", request.url)
        listed = [conflict] if wanted is None or wanted.group(1) == conflict["status"] else []
        fulfil(route, {"conflicts": listed, "next_cursor": None})

    def dead_letters(route: Any) -> None:
        request = route.request
        if request.method == "POST":
            sent.append((request.method, request.url, request.post_data))
            return fulfil(route, {"redriven": 1})
        fulfil(route, {"dead_letters": [letter], "next_cursor": None})

    page.route(re.compile(r"/v1/memories/[^/]+/history$"), history)
    page.route(re.compile(r"/v1/conflicts(/|\?|$)"), conflicts)
    page.route(re.compile(r"/v1/dead-letters(/|\?|$)"), dead_letters)
    connect(page, server)
    expect(page.locator("#status")).to_contain_text("Connected")

    row(page, "乌龙茶").get_by_role("button", name="History").click()
    entries = page.locator("#history-entries li")
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_contain_text("我喜欢喝绿茶。")  # oldest first
    expect(entries.nth(0)).to_contain_text("superseded by " + tea_id)
    expect(entries.nth(1)).to_have_class("current")
    expect(page.locator("#history-note")).to_have_text("2 version(s), oldest first.")

    page.click(".tab[data-view=conflicts]")
    pending = page.locator("#conflicts tbody tr")
    expect(pending).to_have_count(1)
    expect(pending.first).to_contain_text("only coffee")
    pending.first.get_by_role("button", name="Confirm").click()
    confirm(page, accept=True)
    expect(page.locator("#status")).to_contain_text("Conflict confirmed")
    expect(page.locator("#conflicts-note")).to_have_text("No pending conflicts.")
    page.select_option("#conflict-status", "confirmed")
    page.click("#conflict-filters button[type=submit]")
    expect(pending).to_have_count(1)
    expect(pending.first.get_by_role("button")).to_have_count(0)  # resolved: nothing to decide

    page.click(".tab[data-view=dead-letters]")
    letters = page.locator("#dead-letters tbody tr")
    expect(letters).to_contain_text("embedder unavailable")
    letters.first.get_by_role("button", name="Redrive").click()
    confirm(page, accept=True)
    expect(page.locator("#status")).to_have_text("Redriven: 1.")
    assert [(method, url.split("/v1/", 1)[1], body) for method, url, body in sent] == [
        ("POST", "conflicts/c-1", {"decision": "confirm"}),
        ("POST", "dead-letters/turn-42/redrive", None),
    ]
    shot(page, "dead-letters")
    assert page.problems == []


def test_a_token_server_needs_the_token_typed(page: Any, tmp_path: Path) -> None:
    expect = sync_api.expect
    with serving(tmp_path, AGENTMEM_API_TOKEN="inspector-token-1") as base:
        connect(page, base)  # the page itself loads without the token
        expect(page.locator("#status")).to_contain_text("401 unauthorized")
        expect(page.locator("#tabs")).to_be_hidden()
        connect(page, base, token="wrong-token")
        expect(page.locator("#status")).to_contain_text("a valid bearer token is required")
        connect(page, base, token="inspector-token-1")
        expect(page.locator("#status")).to_contain_text("Connected")
        expect(page.locator("#memories-note")).to_contain_text("No memories match")
        page.fill("#token", "wrong-again")
        page.click("#connect")  # a refused caller sees nothing of the last one's data
        expect(page.locator("#status")).to_contain_text("401 unauthorized")
        expect(page.locator("#view-memories")).to_be_hidden()
    assert page.problems == []


def test_erasing_the_user_needs_the_user_id_typed(page: Any, server: str, seeded: dict[str, str]) -> None:
    expect = sync_api.expect
    connect(page, server)
    expect(page.locator("#status")).to_contain_text("Connected")
    page.click(".tab[data-view=user]")
    expect(page.locator("#erase-who")).to_have_text(USER)
    page.click("#erase-user")
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm-ok")).to_be_disabled()
    page.fill("#confirm-typed", "someone-else")
    expect(page.locator("#confirm-ok")).to_be_disabled()
    page.fill("#confirm-typed", USER)
    expect(page.locator("#confirm-ok")).to_be_enabled()
    page.click("#confirm-ok")
    expect(page.locator("#status")).to_contain_text(f"Erased {USER}")
    expect(page.locator("#erase-report")).to_contain_text('"memories"')
    shot(page, "erased")
    status, body = call(server, "GET", "/v1/memories")
    assert status == 200 and body["memories"] == []
    page.click(".tab[data-view=memories]")
    expect(page.locator("#memories-note")).to_contain_text("No memories match")
    assert page.problems == []
