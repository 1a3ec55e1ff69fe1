// GitHub Copilot CLI's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const COPILOT_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: chat tool call in copilot.e2e.
  toolName: (t) => `velesdb-memory-${t}`,
  homeDir: ".copilot",
  userMcp: [
    path.join(".copilot", "mcp-config.json"),
    `{"mcpServers":{"velesdb-memory":{"type":"local","command":"${USER_MCP_COMMAND}","args":[],"tools":["*"]}}}\n`,
  ],
};
