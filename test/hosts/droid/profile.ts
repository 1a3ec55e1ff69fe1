// Factory Droid's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const DROID_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: chat tool call in droid.e2e (three underscores).
  toolName: (t) => `velesdb-memory___${t}`,
  homeDir: ".factory",
  userMcp: [
    path.join(".factory", "mcp.json"),
    `{"mcpServers":{"velesdb-memory":{"type":"stdio","command":"${USER_MCP_COMMAND}","args":[],"disabled":false}}}\n`,
  ],
};
