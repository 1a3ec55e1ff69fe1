// Windsurf Cascade's hooks as data (docs/hosts/windsurf.md; not measured here). No matchers and no
// timeout field: the hooks filter themselves (post_mcp_tool_use reads the server and tool names,
// which the payload gives apart, so the model's name for a tool is the bare tool). pre_write_code
// is Cascade's only edit event and names its target in `tool_info.file_path`.
import type { HostDescriptor } from "./descriptor.ts";

export const WINDSURF = {
  name: "windsurf",
  events: {
    "pre-user-prompt": { wire: "pre_user_prompt" },
    "pre-write-code": { wire: "pre_write_code" },
    "post-mcp-tool-use": { wire: "post_mcp_tool_use" },
  },
  editTools: {},
} as const satisfies HostDescriptor;
