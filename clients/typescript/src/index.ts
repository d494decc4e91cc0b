/** agentmem-client: the TypeScript client of the agentmem HTTP API. Guide: README.md. */

export * from "./client.js";
export * from "./errors.js";
export * from "./retry.js";
export type { components, paths, operations } from "./openapi.js";
