// CodeBuddy Code's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const CODEBUDDY_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: DeferExecuteTool's toolName and PostToolUse tool_name in codebuddy.e2e.
  toolName: (t) => `mcp__velesdb-memory__${t}`,
  homeDir: ".codebuddy",
  userMcp: [
    path.join(".codebuddy", ".mcp.json"),
    `{"mcpServers":{"velesdb-memory":{"type":"stdio","command":"${USER_MCP_COMMAND}","args":[]}}}\n`,
  ],
};
