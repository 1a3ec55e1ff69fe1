// GitHub Copilot CLI's hooks as data (docs/hosts/copilot.md; measured on @github/copilot 1.0.102).
// The camelCase events; `edit` and `create` name their target in `toolArgs.path`, apply_patch
// hands the raw patch as `toolArgs` itself. MCP tools are `<server>-<tool>`, the server spelled as
// the user's mcp-config.json names it; bash is matched for compression.
import type { HostDescriptor } from "./descriptor.ts";

export const COPILOT = {
  name: "copilot",
  events: {
    "session-start": { wire: "sessionStart", timeoutS: 10 },
    stop: { wire: "agentStop", timeoutS: 10 },
    "pre-tool-use": { wire: "preToolUse", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "postToolUse", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    edit: { kind: "path", field: "path" },
    create: { kind: "path", field: "path" },
    apply_patch: { kind: "patch" },
  },
  shellTool: "bash",
  velesdbTools: {
    shownPrefix: "velesdb-memory-",
    sentStem: "velesdb[-_]memory-",
    matched: "all",
    split: "^(velesdb[-_]memory)-([^-]+)$",
  },
} as const satisfies HostDescriptor;
