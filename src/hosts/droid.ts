// Factory Droid (measured on @factory/cli-linux-x64 0.225.2, its `bin/droid` run directly, as
// `droid exec -m custom:<model>-0 --auto high` with a BYOK `customModels` entry of provider
// `generic-chat-completion-api` pointed at the chat-completions mock; no login). Claude-shaped
// hooks under "hooks" in ~/.factory/settings.json, with these differences that shape this host:
// - Payloads carry `session_id`, `transcript_path`, `cwd` (the workspace), `permission_mode`
//   and `hook_event_name`; SessionStart adds `source` and `CLAUDE_ENV_FILE`; Stop adds
//   `message_id`, `stop_hook_active`, `tool_execution_count`, `elapsed_time`. The hook
//   environment has FACTORY_PROJECT_DIR and CLAUDE_PROJECT_DIR = the workspace.
// - A SessionStart hook's stdout `{}` reached the model as a user message reading `{}`: Droid
//   takes plain stdout as context. So every pass here is NO output at all.
// - Edit tools: `Create {file_path, content}` and `Edit {file_path, old_str, new_str,
//   change_all}` (MultiEdit, file_path, is guarded too); the shell is `Execute {command,
//   riskLevel, riskLevelReason}`.
// - MCP tools are `<server>___<tool>` (THREE underscores: `velesdb-memory___recall_fused`);
//   PostToolUse `tool_response` is the MCP text as a string (`"[]"`), which the recall rule
//   reads as Claude's string form. A failed MCP call fires no PostToolUse: it never counts.
// - Exit 3 aborts the agent: this host never uses it (our codes are 0, 2 and 64).
// - PostToolUse cannot replace a tool result (measured for `Execute`, 2000 printed lines, each
//   answer beside a hooks-off run): the tool message the model reads next is byte-for-byte the
//   shell's, whatever the hook answers. `hookSpecificOutput.updatedToolOutput` (Claude's Bash
//   object `{stdout, stderr, interrupted, isImage}` or a plain string), `{"decision":"block",
//   "reason":R}` (Codex's form), and `updatedToolOutput`/`modifiedResult`/`updatedOutput`/
//   `updatedMCPToolOutput` at either level are all ignored (neither R nor any of them reaches the
//   model anywhere). Only two answers reach it, both as an extra message AFTER the unchanged result:
//   `hookSpecificOutput.additionalContext` (verbatim) and exit 2 (`[Hook Feedback] <stderr>`).
//   The bundle agrees: its hook-output schema knows continue, stopReason, suppressOutput,
//   systemMessage, decision, reason and hookSpecificOutput {hookEventName, permissionDecision,
//   permissionDecisionReason, additionalContext, updatedInput}; after PostToolUse it commits the
//   original result. So a replacement maps to a pass and no shell hook is registered (no
//   compression). Droid shortens big shell output itself before any hook sees it: the first and
//   last 30 lines, `[... N lines skipped ...]`, `Full command output saved to: <log> (36KB)` and
//   `[Process exited with code N]`; that string is PostToolUse's `tool_response`.
//   PreCompact exists but was not measured: not registered.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { DROID } from "./descriptors/droid.ts";
import { eventsOf, mcpToolOf, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";
import { silentPassEncoder } from "./silent-pass.ts";
import { evidenceFromSpelledMcpTool, guardNamedEditTool } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { DROID };

const DROID_EDIT_TARGET_FIELD = pathFieldsOf(DROID);

// `<server>___<tool>` (the descriptor's spelling).
const DROID_VELESDB_TOOL = new RegExp(DROID.velesdbTools.split);

export const droid: HostModule = {
  descriptor: DROID,
  profile: { ...tempStateProfile("droid", "droid-", mcpToolOf(DROID)), transcriptFormat: "droid-jsonl" },
  payloadNamesEvent: true,
  events: eventsOf(DROID, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": {
      failure: "closed",
      run: (input) => guardNamedEditTool(input, DROID_EDIT_TARGET_FIELD),
    },
    "post-tool-use": {
      failure: "open",
      // Recall evidence from `velesdb-memory___<tool>` (its text answer as a string).
      run: (input) => evidenceFromSpelledMcpTool(input, DROID_VELESDB_TOOL),
    },
  }),
  encode: silentPassEncoder((text) => ({ decision: "block", reason: text })),
};
