// Claude Code's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const CLAUDE_PROFILE: HostTestProfile = {
  failure: { ...FOUR_EVENTS_FAIL, "pre-compact": "open" },
  // The name its model calls, measured: tool_use name in harness.e2e / mcp-wiring.e2e.
  toolName: (t) => `mcp__velesdb-memory__${t}`,
  homeDir: ".claude",
  userMcp: [
    ".claude.json",
    `{"mcpServers":{"velesdb-memory":{"type":"stdio","command":"${USER_MCP_COMMAND}","args":[],"env":{}}}}\n`,
  ],
};
