// CodeBuddy Code's hooks as data (docs/hosts/codebuddy.md; measured on 2.117.0). Claude-shaped
// events and MCP names (`mcp__<server>__<tool>`), every velesdb-memory tool matched. No shell
// tool: CodeBuddy cannot replace a built-in tool's output, so Bash is not registered; no
// PreCompact: there it can only block (src/hosts/codebuddy.ts).
import type { HostDescriptor } from "./descriptor.ts";

export const CODEBUDDY = {
  name: "codebuddy",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    stop: { wire: "Stop", timeoutS: 10 },
    "pre-tool-use": { wire: "PreToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "PostToolUse", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    Write: { kind: "path", field: "file_path" },
    Edit: { kind: "path", field: "file_path" },
    MultiEdit: { kind: "path", field: "file_path" },
    NotebookEdit: { kind: "path", field: "notebook_path" },
  },
  velesdbTools: { shownPrefix: "mcp__velesdb-memory__", sentStem: "mcp__velesdb[-_]memory__", matched: "all" },
} as const satisfies HostDescriptor;
