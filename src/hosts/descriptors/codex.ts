// Codex CLI's hooks as data (docs/hosts/codex.md; measured on 0.169.0). Edits arrive as
// apply_patch (the raw patch in `tool_input.command`); Edit and Write are matched for hosts that
// expose Claude-style file tools. MCP tool names arrive with `_` (mcp__velesdb_memory__recall_fused),
// and only the recalls are matched, with Bash for compression. Status messages are part of the
// bytes Codex trusts: changing one makes every user re-trust.
import type { HostDescriptor } from "./descriptor.ts";

export const CODEX = {
  name: "codex",
  events: {
    "session-start": {
      wire: "SessionStart",
      timeoutS: 10,
      statusMessage: "velesdb-memory: preparing the working context",
    },
    stop: { wire: "Stop", timeoutS: 10, statusMessage: "velesdb-memory: checking the session save" },
    "pre-tool-use": {
      wire: "PreToolUse",
      matcher: "edit tools",
      timeoutS: 10,
      statusMessage: "velesdb-memory: checking recall before this edit",
    },
    "post-tool-use": {
      wire: "PostToolUse",
      matcher: "velesdb tools",
      timeoutS: 10,
      statusMessage: "velesdb-memory: noting the recall",
    },
  },
  editTools: {
    apply_patch: { kind: "patch", field: "command" },
    Edit: { kind: "path", field: "file_path" },
    Write: { kind: "path", field: "file_path" },
  },
  shellTool: "Bash",
  velesdbTools: { shownPrefix: "mcp__velesdb_memory__", sentStem: "mcp__velesdb[-_]memory__", matched: "recalls" },
} as const satisfies HostDescriptor;
