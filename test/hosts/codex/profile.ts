// Codex CLI's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const CODEX_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: function_call namespace "mcp__velesdb_memory" + name; PostToolUse tool_name.
  toolName: (t) => `mcp__velesdb_memory__${t}`,
  homeDir: ".codex",
  userMcp: [path.join(".codex", "config.toml"), `[mcp_servers.velesdb-memory]\ncommand = "${USER_MCP_COMMAND}"\n`],
};
