// Gemini CLI's test profile: the facts about it that shared tests read as one row each
// (test/hosts/profiles.ts, docs/development/testing.md#a-hosts-folder).
import type { HostTestProfile } from "../profile.ts";

export const GEMINI_PROFILE: HostTestProfile = {
  failure: {
    "session-start": "open",
    "after-agent": "open",
    "before-tool": "closed",
    "after-tool": "open",
  },
  // The name its model calls, measured: functionCall name in gemini.e2e / mcp-wiring.e2e.
  toolName: (t) => `mcp_velesdb-memory_${t}`,
  homeDir: ".gemini",
  // No userMcp: the sandbox writes no server for it (its server lives in its own registry, which its tests write).
};
