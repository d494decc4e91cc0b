// The Vercel AI SDK example (examples/vercel-ai-memory.mjs) against a live agentmem serve, without an
// LLM: the SDK's own mock model (ai/test) sees agentmem's context in its prompt, the turn it answered
// is sent and ingested, and the tools' execute functions store and find memories.
import assert from "node:assert/strict";
import { test } from "node:test";

import { generateText, wrapLanguageModel } from "ai";
import { MockLanguageModelV2 } from "ai/test";

import { AgentMemClient } from "../dist/index.js";
import { memoryMiddleware, memoryTools } from "../examples/vercel-ai-memory.mjs";

const URL_ = process.env.AGENTMEM_URL;
assert.ok(URL_, "AGENTMEM_URL must name a live agentmem serve (make test starts one)");

test("the tools remember and recall through the client", async () => {
  const tools = memoryTools(new AgentMemClient(URL_, { tenantId: "t1", userId: "ai-tools" }));
  const stored = await tools.remember.execute({ content: "用户喜欢喝乌龙茶。", category: "preference" }, { toolCallId: "1", messages: [] });
  assert.match(stored.id, /\S/);
  const found = await tools.recall.execute({ query: "乌龙茶", k: 3 }, { toolCallId: "2", messages: [] });
  assert.ok(found.some((m) => m.id === stored.id), JSON.stringify(found));
});

test("the middleware puts agentmem's context in front of the prompt and sends the turn", async () => {
  const client = new AgentMemClient(URL_, { tenantId: "t1", userId: "ai-middleware" });
  await client.createMemory("I am allergic to peanuts.", { category: "identity" });
  const sent = [];
  const mock = new MockLanguageModelV2({
    doGenerate: async () => ({
      content: [{ type: "text", text: "Then no satay tonight — how about a lentil curry?" }],
      finishReason: "stop",
      usage: { inputTokens: 10, outputTokens: 12, totalTokens: 22 },
      warnings: [],
    }),
  });
  const model = wrapLanguageModel({ model: mock, middleware: memoryMiddleware(client, { sessionId: "s1", onTurn: (id) => sent.push(id) }) });
  const { text } = await generateText({ model, prompt: "What should I cook for dinner? Something with peanuts?" });
  assert.match(text, /lentil/);
  const [call] = mock.doGenerateCalls;
  assert.equal(call.prompt[0].role, "system");
  assert.match(call.prompt[0].content, /peanuts/);
  assert.equal(sent.length, 1);
  const status = await client.waitForTurn(sent[0], { timeoutMs: 20000, intervalMs: 50 });
  assert.equal(status.status, "processed");
});
