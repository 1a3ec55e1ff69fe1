// Gemini CLI's hooks as data (docs/hosts/gemini.md; measured on @google/gemini-cli 0.61.0). AfterAgent
// is its Stop. Matchers are unanchored regexes, hence the anchors. The edit tools are its
// EDIT_TOOL_NAMES, both naming their target in `tool_input.file_path`; MCP tools are spelled
// mcp_<server>_<tool> with the server name as configured (its `-` kept). The installer writes
// the timeout in milliseconds (src/install/clients/gemini.ts).
import type { HostDescriptor } from "./descriptor.ts";

export const GEMINI = {
  name: "gemini",
  events: {
    "session-start": { wire: "SessionStart", timeoutS: 10 },
    "after-agent": { wire: "AfterAgent", timeoutS: 10 },
    "before-tool": { wire: "BeforeTool", matcher: "edit tools", timeoutS: 10 },
    "after-tool": { wire: "AfterTool", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    write_file: { kind: "path", field: "file_path" },
    replace: { kind: "path", field: "file_path" },
  },
  // The hook reads server and tool apart from the payload's `mcp_context`: the same two parts as `split`.
  velesdbTools: {
    shownPrefix: "mcp_velesdb-memory_",
    sentStem: "mcp_velesdb[-_]memory_",
    matched: "recalls",
    split: "^mcp_(velesdb[-_]memory)_(.+)$",
  },
} as const satisfies HostDescriptor;
