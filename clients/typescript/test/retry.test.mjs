// The retry and error rules, against a scripted fetch (no server): the same table as the Python
// client's tests/unit/test_client_retry.py.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AgentMemClient,
  AgentMemTransportError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  RetryPolicy,
  ServiceUnavailableError,
  UnexpectedResponseError,
  errorFrom,
  parseRetryAfter,
} from "../dist/index.js";

const HEALTH = { status: "ok", backend: "local", embedder: "hash", reasons: [], backlogs: [] };
const MEMORY = { id: "m1", content: "x", category: "fact", layer: "long_term", importance: 0.5, importance_source: "scored", confidence: "confirmed", source: "explicit", source_refs: {}, version: 2, status: "active", pinned: false };

function json(status, body, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A client whose fetch answers from `script` in order, recording requests and sleeps. */
function scripted(script, options = {}) {
  const requests = [];
  const sleeps = [];
  const client = new AgentMemClient("http://server.test/prod/", {
    tenantId: "t1",
    userId: "u1",
    retry: new RetryPolicy({ random: () => 0.5, ...(options.retry ?? {}) }),
    sleep: async (ms) => void sleeps.push(ms),
    fetch: async (url, init) => {
      requests.push({ url: String(url), ...init });
      const next = script.shift();
      if (next === undefined) throw new Error("script ran out");
      if (next instanceof Error) throw next;
      return next();
    },
  });
  return { client, requests, sleeps };
}

function refused() {
  const error = new TypeError("fetch failed");
  error.cause = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  return error;
}

function reset() {
  const error = new TypeError("fetch failed");
  error.cause = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  return error;
}

test("a 429 is retried after Retry-After, even for a call that is not idempotent", async () => {
  const { client, requests, sleeps } = scripted([
    () => json(429, { error: "queue_full", message: "busy" }, { "Retry-After": "2" }),
    () => json(200, MEMORY),
  ]);
  const out = await client.patchMemory("m1", { pinned: true });
  assert.equal(out.version, 2);
  assert.equal(requests.length, 2);
  assert.equal(requests[0].method, "PATCH");
  assert.ok(sleeps[0] >= 2000 && sleeps[0] < 2100, `waited ${sleeps[0]} ms`);
});

test("a 503 is retried for an idempotent call and not for patchMemory or resolveConflict", async () => {
  const down = () => json(503, { error: "store_unavailable", message: "down" }, { "Retry-After": "1" });
  const ok = scripted([down, () => json(200, HEALTH)]);
  assert.equal((await ok.client.health()).status, "ok");
  assert.equal(ok.requests.length, 2);

  const patch = scripted([down]);
  await assert.rejects(patch.client.patchMemory("m1", { content: "y" }), (e) => e instanceof ServiceUnavailableError && e.retryAfter === 1);
  assert.equal(patch.requests.length, 1);

  const resolve = scripted([down]);
  await assert.rejects(resolve.client.resolveConflict("c1", "confirm"), ServiceUnavailableError);
  assert.equal(resolve.requests.length, 1);
});

test("a refused connection is retried for any call; a reset one only when idempotent", async () => {
  const again = scripted([refused(), () => json(200, MEMORY)]);
  assert.equal((await again.client.patchMemory("m1", { tags: ["a"] })).id, "m1");
  assert.equal(again.requests.length, 2);
  assert.equal(again.sleeps[0], 125); // full jitter: 250 ms * 2**0 * 0.5

  const lost = scripted([reset()]);
  await assert.rejects(lost.client.patchMemory("m1", { tags: ["a"] }), AgentMemTransportError);
  assert.equal(lost.requests.length, 1);

  const read = scripted([reset(), reset(), reset(), reset()]);
  await assert.rejects(read.client.health(), (e) => e instanceof AgentMemTransportError && e.details.attempts === 4);
  assert.deepEqual(read.sleeps, [125, 250, 500]); // exponential, four attempts in all
});

test("a Retry-After longer than the policy allows is not waited for", async () => {
  const { client, requests } = scripted([() => json(429, { error: "queue_full", message: "later" }, { "Retry-After": "3600" })]);
  await assert.rejects(client.health(), (e) => e instanceof RateLimitedError && e.retryAfter === 3600);
  assert.equal(requests.length, 1);
});

test("turns and memory creation carry their own idempotency keys, the same on every attempt", async () => {
  const { client, requests } = scripted([
    () => json(500, { error: "internal_error", message: "boom" }),
    () => json(202, { accepted: 1, message_ids: ["x"] }),
    () => json(502, {}),
    () => json(201, { memory: MEMORY, redacted: [] }),
  ]);
  await client.addTurn("s1", "我住在青岛。");
  const [first, second] = requests.map((r) => JSON.parse(r.body).turns[0].message_id);
  assert.match(first, /^msg-[0-9a-f]{32}$/);
  assert.equal(first, second);
  await client.createMemory("I keep bees.");
  assert.equal(requests[2].headers["Idempotency-Key"], requests[3].headers["Idempotency-Key"]);
  assert.equal(requests[0].url, "http://server.test/prod/v1/turns"); // the stage path is kept
  assert.equal(requests[0].headers["X-Tenant-Id"], "t1");
});

test("errors are chosen by status and carry the ErrorOut body", async () => {
  const { client } = scripted([() => json(404, { error: "not_found", message: "no memory m9" }, { "x-request-id": "r-1" })]);
  await assert.rejects(client.getMemory("m9"), (e) => e instanceof NotFoundError && e.error === "not_found" && e.requestId === "r-1" && e.status === 404);
  const gateway = errorFrom(413, "<html>too large</html>");
  assert.ok(gateway instanceof InvalidRequestError);
  assert.equal(gateway.error, "http_413");
  assert.equal(gateway.message, "<html>too large</html>");
});

test("a success that is not JSON is an UnexpectedResponseError", async () => {
  const { client } = scripted([() => new Response("<html>proxy</html>", { status: 200 })]);
  await assert.rejects(client.health(), UnexpectedResponseError);
});

test("Retry-After reads seconds and HTTP dates, never negative", () => {
  assert.equal(parseRetryAfter("2"), 2);
  assert.equal(parseRetryAfter("1.5"), 1.5);
  const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
  assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:28:10 GMT", now), 10);
  assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter(null), undefined);
});
