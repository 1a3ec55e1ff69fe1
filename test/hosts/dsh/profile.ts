// The DeepSeek harness's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import { FOUR_EVENTS_FAIL, type HostTestProfile } from "../profile.ts";

export const DSH_PROFILE: HostTestProfile = {
  failure: FOUR_EVENTS_FAIL,
  // The name its model calls, measured: the bridge's tool_name, dsh-bridge.e2e.
  toolName: (t) => `mcp__velesdb-memory__${t}`,
  homeDir: ".dsh",
  // No userMcp: the sandbox writes no server for it (its server lives in its own registry, which its tests write).
};
