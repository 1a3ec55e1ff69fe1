// Factory Droid's hooks as data (docs/hosts/droid.md; measured on 0.225.2). Claude-shaped events;
// Create, Edit and MultiEdit name their target in `file_path`; MCP tools are `<server>___<tool>`
// (three underscores). No shell tool: Droid cannot replace a tool result, so nothing compresses.
import type { HostDescriptor } from "./descriptor.ts";

export const DROID = {
  name: "droid",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    stop: { wire: "Stop", timeoutS: 10 },
    "pre-tool-use": { wire: "PreToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "PostToolUse", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    Create: { kind: "path", field: "file_path" },
    Edit: { kind: "path", field: "file_path" },
    MultiEdit: { kind: "path", field: "file_path" },
  },
  velesdbTools: {
    shownPrefix: "velesdb-memory___",
    sentStem: "velesdb[-_]memory___",
    matched: "all",
    split: "^(velesdb[-_]memory)___(.+)$",
  },
} as const satisfies HostDescriptor;
