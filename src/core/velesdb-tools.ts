// velesdb-memory's tools as hosts and rules name them, plain data (server 0.17.0:
// docs/mcp-server.md). The recall tools are those whose successful answer proves the agent looked
// at memory (src/core/recall.ts); compile_context counts only with a memory_scope. The order is
// the one the installer's matchers have always had (Codex trusts entries by their bytes).
export const RECALL_TOOL_NAMES: readonly string[] = [
  "recall",
  "recall_fused",
  "recall_where",
  "compile_context",
  "entity",
  "why",
];

/** The recall tool that counts only when its input names a memory scope. */
export const SCOPED_RECALL_TOOL = "compile_context";
