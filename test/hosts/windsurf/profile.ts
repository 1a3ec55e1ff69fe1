// Windsurf's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const WINDSURF_PROFILE: HostTestProfile = {
  failure: {
    "pre-user-prompt": "open",
    "pre-write-code": "closed",
    "post-mcp-tool-use": "open",
  },
  // Never run here: the bare name (src/hosts/windsurf.ts says so).
  toolName: (t) => t,
  homeDir: path.join(".codeium", "windsurf"),
  userMcp: [
    path.join(".codeium", "windsurf", "mcp_config.json"),
    `{"mcpServers":{"velesdb-memory":{"command":"${USER_MCP_COMMAND}"}}}\n`,
  ],
};
