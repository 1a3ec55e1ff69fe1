// OpenCode's hooks as data (docs/hosts/opencode.md; measured on opencode-ai 1.18.33). OpenCode has
// no command hooks: the plugin the installer writes (src/install/clients/opencode-plugin.ts)
// calls these events from its own callbacks (the wire names) with a bounded spawn of `timeoutS`,
// sending only the edit tools before and bash and the velesdb-memory tools after. The edit tools
// name their target in `filePath`, apply_patch holds its patch in `patchText`; MCP tools reach the
// model as `<server>_<tool>`, the server key sanitised ([^a-zA-Z0-9_-] → _).
import type { HostDescriptor } from "./descriptor.ts";

export const OPENCODE = {
  name: "opencode",
  events: {
    "session-start": { wire: "experimental.chat.system.transform", timeoutS: 10 },
    stop: { wire: "session.idle", timeoutS: 10 },
    "pre-compact": { wire: "experimental.session.compacting", timeoutS: 10 },
    "pre-tool-use": { wire: "tool.execute.before", matcher: "edit tools", timeoutS: 10 },
    "post-tool-use": { wire: "tool.execute.after", matcher: "velesdb tools", timeoutS: 10 },
  },
  editTools: {
    write: { kind: "path", field: "filePath" },
    edit: { kind: "path", field: "filePath" },
    patch: { kind: "path", field: "filePath" },
    multiedit: { kind: "path", field: "filePath" },
    apply_patch: { kind: "patch", field: "patchText" },
  },
  shellTool: "bash",
  velesdbTools: {
    shownPrefix: "velesdb-memory_",
    sentStem: "velesdb[-_]memory_",
    matched: "all",
    split: "^(velesdb[-_]memory)_(.+)$",
  },
} as const satisfies HostDescriptor;

/** OpenCode's descriptor under any name: its fork Kilo Code's is that (./kilo.ts). */
export type OpencodeLike = Omit<typeof OPENCODE, "name"> & { readonly name: string };
