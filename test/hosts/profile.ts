// What a host's folder tells the shared tests about it (docs/development/testing.md#a-hosts-folder):
// one profile per host, test/hosts/<host>/profile.ts, gathered in test/hosts/profiles.ts. A table
// that every host has a row in lives here, not in the test that reads it, so a new host is its
// folder plus one row in profiles.ts.

/** The velesdb-memory server command a user configured in the sandboxes: a stand-in that answers nothing. */
export const USER_MCP_COMMAND = "/bin/sh";

/**
 * The policies of the four events most hosts have, written once: only the edit guard closes.
 * A host with PreCompact adds it (open); Gemini and Windsurf name their events their own way.
 */
export const FOUR_EVENTS_FAIL: Readonly<Record<string, "open" | "closed">> = {
  "session-start": "open",
  stop: "open",
  "pre-tool-use": "closed",
  "post-tool-use": "open",
};

export interface HostTestProfile {
  /**
   * How each event's rule fails when it throws (docs/contract.md §10): the edit guard closes,
   * the rest open. Written by hand, not read from the descriptor, so test/failure-policy.test.ts
   * fails when an event changes its policy.
   */
  readonly failure: Readonly<Record<string, "open" | "closed">>;
  /** toolName("recall_fused") → the name the host's model calls, as measured on its real CLI (test/tool-names.test.ts). */
  readonly toolName: (tool: string) => string;
  /** The directory under HOME whose presence makes `install` pick the host (test/support/install-sandbox.ts). */
  readonly homeDir: string;
  /**
   * The velesdb-memory server a user configured: [its file under HOME, the file's text], written
   * by the install sandbox when that file is not the hooks registry (docs/mcp-server.md).
   */
  readonly userMcp?: readonly [string, string];
}
