// Qwen Code's hooks as data (docs/hosts/qwen.md; measured on @qwen-code/qwen-code 0.24.4):
// Claude-shaped events, its own edit tools, MCP tools `mcp__<server>__<tool>`, only the recalls
// matched. The installer writes the timeouts in milliseconds (src/install/clients/qwen.ts).
import type { HostDescriptor } from "./descriptor.ts";

export const QWEN = {
  name: "qwen",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    stop: { wire: "Stop", timeoutS: 10 },
    "pre-compact": { wire: "PreCompact", timeoutS: 10 },
    "pre-tool-use": { wire: "PreToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "PostToolUse", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    edit: { kind: "path", field: "file_path" },
    write_file: { kind: "path", field: "file_path" },
    notebook_edit: { kind: "path", field: "notebook_path" },
  },
  velesdbTools: { shownPrefix: "mcp__velesdb-memory__", sentStem: "mcp__velesdb[-_]memory__", matched: "recalls" },
} as const satisfies HostDescriptor;
