// Long-term memory for a Vercel AI SDK model, through agentmem's TypeScript client.
//
// Two ways, usable together:
//  - memoryMiddleware(client, { sessionId }): wraps any language model (wrapLanguageModel). Before
//    each call it puts agentmem's context for the user's last message in front of the prompt (a
//    system message); after a generate call it sends the finished turn (user + assistant text) to
//    agentmem, which extracts what is worth remembering.
//  - memoryTools(client): `remember` and `recall` tools the model may call itself.
//
//   import { openai } from "@ai-sdk/openai";
//   import { generateText, wrapLanguageModel, stepCountIs } from "ai";
//   const client = new AgentMemClient("http://127.0.0.1:8080", { tenantId: "demo", userId: "alice" });
//   const model = wrapLanguageModel({ model: openai("gpt-4o-mini"), middleware: memoryMiddleware(client, { sessionId: "s1" }) });
//   const { text } = await generateText({ model, tools: memoryTools(client), stopWhen: stepCountIs(3), prompt: "晚饭吃什么？" });
//
// Plain JavaScript (ES module) over the built client: `npm run build` first, then import this file.

import { jsonSchema, tool } from "ai";

/** The text of the last user message of an AI SDK prompt (LanguageModelV2Prompt). */
export function lastUserText(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role !== "user") continue;
    return message.content
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("\n");
  }
  return "";
}

/** The assistant text of a generate result (LanguageModelV2 content parts). */
function assistantText(result) {
  return (result.content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
}

/**
 * A LanguageModelV2 middleware: agentmem's context before the call, the turn after it.
 * `mode`: the context mode ("chat", "tool", "react", "rag"). `onTurn(messageId)`: told the id of
 * each turn sent (to wait for its ingestion, e.g. in tests).
 */
export function memoryMiddleware(client, { sessionId, mode = "chat", onTurn } = {}) {
  if (!sessionId) throw new RangeError("memoryMiddleware needs a sessionId");
  return {
    middlewareVersion: "v2",
    async transformParams({ params }) {
      const query = lastUserText(params.prompt);
      if (!query.trim()) return params;
      const { context } = await client.context(query, { mode, sessionId });
      if (!context) return params; // nothing worth injecting
      return { ...params, prompt: [{ role: "system", content: context }, ...params.prompt] };
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      const user = lastUserText(params.prompt);
      if (user.trim()) {
        const sent = await client.addTurn(sessionId, user, assistantText(result));
        onTurn?.(sent.message_ids[0]);
      }
      return result;
    },
  };
}

/** `remember` and `recall` as AI SDK tools over the client (the model decides when to call them). */
export function memoryTools(client) {
  return {
    remember: tool({
      description: "Store a durable fact or preference about the user in long-term memory.",
      inputSchema: jsonSchema({
        type: "object",
        properties: {
          content: { type: "string", description: "The fact, in the user's language." },
          category: {
            type: "string",
            enum: ["identity", "preference", "fact", "episodic", "policy", "tool_failure", "general"],
          },
        },
        required: ["content"],
        additionalProperties: false,
      }),
      execute: async ({ content, category }) => {
        const created = await client.createMemory(content, category ? { category } : {});
        return { id: created.memory.id, stored: created.memory.content, redacted: created.redacted };
      },
    }),
    recall: tool({
      description: "Search the user's long-term memory; returns the best matching memories.",
      inputSchema: jsonSchema({
        type: "object",
        properties: {
          query: { type: "string" },
          k: { type: "integer", minimum: 1, maximum: 20 },
        },
        required: ["query"],
        additionalProperties: false,
      }),
      execute: async ({ query, k = 5 }) => {
        const { memories } = await client.recall(query, { k });
        return memories.map((m) => ({ id: m.id, content: m.content, score: m.score }));
      },
    }),
  };
}
