// The DeepSeek harness's hooks (through its Codex bridge) as data (docs/hosts/dsh.md). Its own file
// tools; its shell `bash` is not an edit, and tool_input never carries a path, so the guard
// evaluates the session cwd's policy. The bridge matches unanchored regexes (hence the anchors),
// spells MCP tools mcp__<server>__<tool>, reads `timeout` in seconds and ignores statusMessage.
import type { HostDescriptor } from "./descriptor.ts";

export const DSH = {
  name: "dsh",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    stop: { wire: "Stop", timeoutS: 10 },
    "pre-tool-use": { wire: "PreToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "PostToolUse", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    edit: { kind: "none" },
    write: { kind: "none" },
    str_replace_editor: { kind: "none" },
  },
  // fixtures/payloads/dsh/post-tool-use.recall-fused.json; test/hosts/dsh/dsh-bridge.e2e.test.ts.
  velesdbTools: { shownPrefix: "mcp__velesdb-memory__", sentStem: "mcp__velesdb[-_]memory__", matched: "recalls" },
} as const satisfies HostDescriptor;
