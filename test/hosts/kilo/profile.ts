// Kilo Code's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import * as path from "node:path";
import { FOUR_EVENTS_FAIL, type HostTestProfile, USER_MCP_COMMAND } from "../profile.ts";

export const KILO_PROFILE: HostTestProfile = {
  failure: { ...FOUR_EVENTS_FAIL, "pre-compact": "open" },
  // The name its model calls, measured: chat tool call in kilo.e2e (OpenCode's form).
  toolName: (t) => `velesdb-memory_${t}`,
  homeDir: path.join(".config", "kilo"),
  userMcp: [
    path.join(".config", "kilo", "kilo.json"),
    `{"mcp":{"velesdb-memory":{"type":"local","command":["${USER_MCP_COMMAND}"],"enabled":true}}}\n`,
  ],
};
