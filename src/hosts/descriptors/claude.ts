// Claude Code's hooks as data (docs/hosts/claude.md; measured on 2.1.328). The PostToolUse matcher
// takes Bash (compression) and every velesdb-memory tool, also behind a plugin prefix whose
// plugin name has no underscore: the same shape as src/core/recall.ts reads. PostToolUse waits
// 30 s because it compiles large Bash output; everything else is local and fast.
import type { HostDescriptor } from "./descriptor.ts";

export const CLAUDE = {
  name: "claude",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    stop: { wire: "Stop", timeoutS: 10 },
    "pre-compact": { wire: "PreCompact", timeoutS: 10 },
    "pre-tool-use": { wire: "PreToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "PostToolUse", matcher: "velesdb tools", timeoutS: 30 },
  },
  // Each names its target in an absolute path (backslashes on Windows).
  editTools: {
    Edit: { kind: "path", field: "file_path" },
    Write: { kind: "path", field: "file_path" },
    NotebookEdit: { kind: "path", field: "notebook_path" },
  },
  shellTool: "Bash",
  velesdbTools: {
    shownPrefix: "mcp__velesdb-memory__",
    sentStem: "mcp__(plugin_[^_]+_)?velesdb[-_]memory__",
    matched: "all",
  },
} as const satisfies HostDescriptor;
