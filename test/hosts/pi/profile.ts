// Pi's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const PI_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: the `tool` of pi-mcp-adapter's proxy call `mcp` in pi.e2e.
  toolName: (t) => `velesdb_memory_${t}`,
  homeDir: path.join(".pi", "agent"),
  userMcp: [
    path.join(".pi", "agent", "mcp.json"),
    `{"mcpServers":{"velesdb-memory":{"command":"${USER_MCP_COMMAND}","args":[]}}}\n`,
  ],
};
