// What the installer registers, in one table (SPEC §4.1–§4.4). One row per (client, event):
// the key the client's registry files it under, the kebab-case event our binary receives in
// argv, the matcher that keeps the host from spawning us on every tool call, the timeout and,
// for Codex, the status line shown while the hook runs. Adding a host is new rows plus one
// client adapter in clients.ts; install, uninstall, check and doctor read only this table.
//
// Every field here ends up in the bytes of an entry. Codex trusts an entry by the hash of
// those bytes and silently skips it once they change, so a row must stay byte-stable across
// releases: change a matcher, timeout or status text only when the behaviour needs it, and
// say in the release notes that Codex users re-trust in /hooks.

export type ClientName = "claude" | "codex" | "windsurf" | "dsh";

export const CLIENT_NAMES: readonly ClientName[] = ["claude", "codex", "windsurf", "dsh"];

export interface Registration {
  readonly client: ClientName;
  /** The key under `hooks` in the client's registry, exactly as the host spells it. */
  readonly wireEvent: string;
  /** The `<event>` of `velesdb-hooks <host> <event>`. */
  readonly argvEvent: string;
  /** Regex the host matches against the tool name; absent for lifecycle events. */
  readonly matcher?: string;
  /** Seconds the host waits before giving up on the hook; absent where the host has no such field (Windsurf). */
  readonly timeout?: number;
  /** Codex shows this while the hook runs. */
  readonly statusMessage?: string;
}

// Claude: PostToolUse compiles large Bash output, hence 30 s; everything else is local and fast.
const CLAUDE_EDIT_TOOLS = "^(Edit|Write|NotebookEdit)$";
const CLAUDE_POST_TOOLS = "^(Bash|mcp__(plugin_[^_]+_)?velesdb[-_]memory__.+)$";
// Codex: edits arrive as apply_patch; MCP tool names arrive with `_` (mcp__velesdb_memory__recall_fused).
const CODEX_EDIT_TOOLS = "^(apply_patch|Edit|Write)$";
const CODEX_RECALL_TOOLS = "^mcp__velesdb[-_]memory__(recall|recall_fused|recall_where|compile_context|entity|why)$";
// DeepSeek harness (through the Codex bridge): its own file tools — its shell `bash` is not an
// edit, and tool_input never carries a path, so the guard evaluates the session cwd's policy.
// The bridge matches unanchored regexes, hence the anchors. MCP tools are spelled
// mcp__<server>__<tool> with the server name as configured: the Codex matcher fits as is.
const DSH_EDIT_TOOLS = "^(edit|write|str_replace_editor)$";

export const REGISTRATIONS: readonly Registration[] = [
  { client: "claude", wireEvent: "SessionStart", argvEvent: "session-start", timeout: 10 },
  { client: "claude", wireEvent: "Stop", argvEvent: "stop", timeout: 10 },
  { client: "claude", wireEvent: "PreCompact", argvEvent: "pre-compact", timeout: 10 },
  { client: "claude", wireEvent: "PreToolUse", argvEvent: "pre-tool-use", matcher: CLAUDE_EDIT_TOOLS, timeout: 10 },
  { client: "claude", wireEvent: "PostToolUse", argvEvent: "post-tool-use", matcher: CLAUDE_POST_TOOLS, timeout: 30 },
  {
    client: "codex",
    wireEvent: "SessionStart",
    argvEvent: "session-start",
    timeout: 10,
    statusMessage: "velesdb-memory: preparing the working context",
  },
  { client: "codex", wireEvent: "Stop", argvEvent: "stop", timeout: 10, statusMessage: "velesdb-memory: checking the session save" },
  {
    client: "codex",
    wireEvent: "PreToolUse",
    argvEvent: "pre-tool-use",
    matcher: CODEX_EDIT_TOOLS,
    timeout: 10,
    statusMessage: "velesdb-memory: checking recall before this edit",
  },
  {
    client: "codex",
    wireEvent: "PostToolUse",
    argvEvent: "post-tool-use",
    matcher: CODEX_RECALL_TOOLS,
    timeout: 10,
    statusMessage: "velesdb-memory: noting the recall",
  },
  // Windsurf: a flat list of handlers per event, no matchers and no timeout field; the hooks
  // themselves filter (post_mcp_tool_use looks at the server and tool names).
  { client: "windsurf", wireEvent: "pre_user_prompt", argvEvent: "pre-user-prompt" },
  { client: "windsurf", wireEvent: "pre_write_code", argvEvent: "pre-write-code" },
  { client: "windsurf", wireEvent: "post_mcp_tool_use", argvEvent: "post-mcp-tool-use" },
  // DeepSeek harness: the bridge reads `timeout` in seconds and ignores statusMessage.
  { client: "dsh", wireEvent: "SessionStart", argvEvent: "session-start", timeout: 10 },
  { client: "dsh", wireEvent: "Stop", argvEvent: "stop", timeout: 10 },
  { client: "dsh", wireEvent: "PreToolUse", argvEvent: "pre-tool-use", matcher: DSH_EDIT_TOOLS, timeout: 10 },
  { client: "dsh", wireEvent: "PostToolUse", argvEvent: "post-tool-use", matcher: CODEX_RECALL_TOOLS, timeout: 10 },
];

/** registrationsFor("codex") → that client's rows, in registration order. */
export function registrationsFor(client: ClientName): readonly Registration[] {
  return REGISTRATIONS.filter((row) => row.client === client);
}
