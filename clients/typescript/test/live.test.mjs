// The client against a live `agentmem serve` (AGENTMEM_URL; tests/integration/test_client_typescript.py
// starts one and runs `node --test`): every operation, in Chinese and in English, errors mapped to
// their classes from the server's real answers, and the README's example as written.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import {
  AgentMemClient,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
} from "../dist/index.js";

const URL_ = process.env.AGENTMEM_URL;
assert.ok(URL_, "AGENTMEM_URL must name a live agentmem serve (make test starts one)");
const client = (user, tenant = "t1") => new AgentMemClient(URL_, { tenantId: tenant, userId: user });

test("a Chinese turn is ingested and recalled; another user sees none of it", async () => {
  const am = client("ts-zh");
  const sent = await am.addTurn("s1", "我叫林晓雨，住在青岛，对花生过敏。", "好的，记住了。");
  assert.equal(sent.accepted, 1);
  assert.match(sent.message_ids[0], /^msg-[0-9a-f]{32}$/);
  const status = await am.waitForTurn(sent.message_ids[0], { timeoutMs: 20000, intervalMs: 50 });
  assert.equal(status.status, "processed");
  assert.ok(status.memory_ids.length >= 1);
  const recalled = await am.recall("花生过敏", { k: 3 });
  assert.ok(recalled.memories.some((m) => m.content.includes("花生")), JSON.stringify(recalled));
  assert.equal(typeof recalled.memories[0].score, "number");
  const ctx = await am.context("晚饭吃什么？", { sessionId: "s1" });
  assert.equal(ctx.mode, "chat");
  assert.ok(ctx.context.includes("花生"), ctx.context);
  assert.deepEqual((await client("ts-other").recall("花生过敏")).memories, []);
});

test("memories: create, read, patch with a version, history, list, delete", async () => {
  const am = client("ts-en");
  const created = await am.createMemory("I keep bees on my roof in Leeds.", { category: "fact", tags: ["hobby"] });
  const id = created.memory.id;
  assert.equal((await am.getMemory(id)).content, "I keep bees on my roof in Leeds.");
  const patched = await am.patchMemory(id, { pinned: true, expectedVersion: created.memory.version });
  assert.equal(patched.pinned, true);
  await assert.rejects(am.patchMemory(id, { pinned: false, expectedVersion: created.memory.version }), ConflictError);
  assert.ok((await am.history(id)).entries.length >= 1);
  assert.ok((await am.listMemories({ limit: 10 })).memories.some((m) => m.id === id));
  assert.equal((await am.deleteMemory(id)).deleted, 1);
  await assert.rejects(am.getMemory("no-such-memory"), (e) => e instanceof NotFoundError && e.error === "not_found");
});

test("session state, audit, health, conflicts and the errors of bad requests", async () => {
  const am = client("ts-state");
  const put = await am.putSessionState("s9", { plan: { goal: "订机票", step: "选航班" }, task_memory: ["预算 3000 元"] });
  assert.equal(put.session_id, "s9");
  assert.equal((await am.getSessionState("s9")).state.plan.goal, "订机票");
  assert.equal((await am.health()).status, "ok");
  assert.ok(Array.isArray((await am.audit({ limit: 5 })).events));
  assert.deepEqual((await am.conflicts()).conflicts, []);
  await assert.rejects(am.recall("x", { k: 0 }), (e) => e instanceof InvalidRequestError && e.status === 422);
  await assert.rejects(am.eraseUser("someone-else"), PermissionDeniedError);
  const erased = await am.eraseUser();
  assert.equal(typeof erased.memories, "number");
});

test("the README example runs as written", async () => {
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const example = readme.match(/## Ten lines[\s\S]*?```js\n([\s\S]*?)```/);
  assert.ok(example, "README.md has no ten-line example");
  assert.ok(example[1].trim().split("\n").length <= 10);
  const file = fileURLToPath(new URL("./readme-example.tmp.mjs", import.meta.url)); // inside the package: `agentmem-client` resolves to itself
  await writeFile(file, example[1]);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [file], { env: { ...process.env, AGENTMEM_URL: URL_ } });
    assert.match(stdout, /青岛/);
  } finally {
    await rm(file, { force: true });
  }
});
