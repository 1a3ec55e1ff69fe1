// The Pi coding agent's hooks as data (docs/hosts/pi.md; measured on
// @mariozechner/pi-coding-agent 0.73.1 with pi-mcp-adapter 2.11.0). No command hooks: the
// extension the installer writes (src/install/clients/pi-extension.ts) calls these events from
// Pi's own (the wire names) with a bounded spawn of `timeoutS`, sending only the edit tools at
// tool_call and bash and the velesdb-memory results at tool_result. `write` and `edit` name
// their target in `path`. The adapter hands server and tool apart (`details.server`,
// `details.tool`), and the model names a tool `velesdb_memory_<tool>` (its toolPrefix "server",
// `-` made `_`: test/hosts/pi/pi.e2e.test.ts).
import type { HostDescriptor } from "./descriptor.ts";

export const PI = {
  name: "pi",
  events: {
    "session-start": { wire: "before_agent_start", timeoutS: 10 },
    stop: { wire: "turn_end", timeoutS: 10 },
    "pre-tool-use": { wire: "tool_call", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "tool_result", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    write: { kind: "path", field: "path" },
    edit: { kind: "path", field: "path" },
  },
  shellTool: "bash",
  velesdbTools: { shownPrefix: "velesdb_memory_", server: "velesdb[-_]memory", matched: "all" },
} as const satisfies HostDescriptor;
