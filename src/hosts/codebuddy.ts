// CodeBuddy Code (Tencent; measured on 2.117.0, the CLI that @tencent-ai/agent-sdk 0.3.201 ships
// under cli/, run as `codebuddy -p -y --model <id>` with a models.json entry pointed at the
// chat-completions mock; no login). Claude-shaped command hooks under "hooks" in
// ~/.codebuddy/settings.json; the differences that shape this host:
// - Payloads carry `session_id`, `transcript_path`, `cwd`, `permission_mode` and
//   `hook_event_name`; SessionStart `source` (startup|resume|clear|compact); Stop
//   `stop_hook_active` and `last_assistant_message`. The hook runs through $SHELL (Git Bash on
//   Windows) with CODEBUDDY_PROJECT_DIR and CLAUDE_PROJECT_DIR set.
// - SessionStart `hookSpecificOutput.additionalContext` reaches the model inside the first user
//   message as `<system-reminder data-role="hook">…`; PreToolUse `permissionDecision:"deny"`
//   makes the tool message `Error: <reason>` and the tool does not run.
// - Stop: `{"continue":false,"reason":R}` (the documented form; `decision:"block"` and exit 2
//   work too) starts one more turn whose user message is `Stop hook: R`, and the next Stop
//   carries `stop_hook_active:true`. Only in a live session (`--input-format stream-json`, the
//   TUI): plain `-p "PROMPT"` logs the continuation and exits before sending it.
// - MCP tools are `mcp__<server>__<tool>`. A user-scope server's tools reach the model only
//   through `DeferExecuteTool {toolName, params}`, but PostToolUse names the real tool, its
//   `tool_response` the MCP content array. A failed MCP call (isError) reaches PostToolUse
//   exactly like a success — `[{type:"text",text:"…"}]`, no error flag — so a recall is judged
//   by its content alone (src/core/recall.ts: free text, an `error` key or nothing at all never
//   counts).
// - No output replacement for built-in tools (the bundle reads `updatedMCPToolOutput`, for
//   mcp__* tools only, and no `updatedToolOutput`): no Bash compression, so Bash is not
//   registered. PreCompact can only block: not registered.
// - A pass prints nothing: plain stdout of SessionStart is context to CodeBuddy (its docs).
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { CODEBUDDY } from "./descriptors/codebuddy.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { eventsOf, mcpToolOf, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";
import { silentPassEncoder } from "./silent-pass.ts";
import { evidenceOnlyPostToolUse, guardNamedEditTool } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { CODEBUDDY };

// The edit tools the guard covers (the descriptor's), and the field that names each one's target.
const CODEBUDDY_EDIT_TARGET_FIELD = pathFieldsOf(CODEBUDDY);

export const codebuddy: HostModule = {
  descriptor: CODEBUDDY,
  profile: {
    ...tempStateProfile("codebuddy", "codebuddy-", mcpToolOf(CODEBUDDY)),
    transcriptFormat: "codebuddy-jsonl",
  },
  payloadNamesEvent: true,
  events: eventsOf(CODEBUDDY, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": {
      failure: "closed",
      run: (input) => guardNamedEditTool(input, CODEBUDDY_EDIT_TARGET_FIELD),
    },
    "post-tool-use": {
      failure: "open",
      // Recall evidence from `mcp__velesdb-memory__<tool>`, read from its content alone.
      run: evidenceOnlyPostToolUse,
    },
  }),
  encode: silentPassEncoder((text) => ({ continue: false, reason: text })),
};
