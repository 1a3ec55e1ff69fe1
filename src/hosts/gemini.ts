// Gemini CLI (measured on @google/gemini-cli 0.61.0, offline against test/hosts/gemini/mock-gemini.ts;
// payloads in fixtures/payloads/gemini/). Quirks that shape this host:
// - Events: SessionStart (source startup|resume|clear), BeforeTool, AfterTool, AfterAgent (the
//   Stop), plus BeforeAgent, PreCompress and SessionEnd, which we do not wire. PreCompress's
//   output is unused, and it fires (trigger "auto") before EVERY model turn, ahead of the
//   size check: five times in a five-request run. It is no sign that the chat was compressed,
//   and no SessionStart follows a compression, so the post-compaction note has no channel.
// - Every answer is one JSON object with exit 0; stdout is parsed, or stderr when stdout is
//   empty. A NON-JSON answer with an exit code other
//   than 0 or 1 DENIES the tool with that text as reason: measured, a BeforeTool hook printing
//   a usage error on stderr with exit 64 blocked write_file ("Tool execution blocked:
//   velesdb-hooks: usage error"), while exit 1 let it run with a warning. So this host never
//   exits with another code: usage errors exit 1 (`usageExitCode`), and a deny whose stdout
//   cannot be written falls back to the same JSON on stderr with exit 0, not to exit 2.
// - SessionStart `hookSpecificOutput.additionalContext` is prepended to the first user prompt
//   as `<hook_context>…</hook_context>` (same user content entry as the prompt, after the
//   host's `<session_context>` part); `<` and `>` in our text arrive as `&lt;` / `&gt;`.
// - BeforeTool refusal: only the top-level `{"decision":"deny","reason":…}` is read; Claude's
//   hookSpecificOutput.permissionDecision is ignored (the tool runs). The model gets a
//   functionResponse `{"error":"Tool execution blocked: <reason>"}` and the turn goes on.
// - Edit tools are `write_file` and `replace`; both name their target in
//   `tool_input.file_path`, which the model may give RELATIVE to the payload's `cwd`.
//   (`replace` must carry `instruction`; the CLI validates that before BeforeTool runs.)
// - MCP tools are spelled `mcp_<server>_<tool>` (`mcp_velesdb-memory_recall_fused`); the
//   payload also carries `mcp_context.server_name` / `.tool_name`, which we read instead of
//   splitting the name (a server name may hold `_`).
// - AfterTool `tool_response` is `{llmContent, returnDisplay, error?}`: a successful MCP call
//   has llmContent `[{text:"<untrusted_context>\n…\n</untrusted_context>"}]` and no `error`;
//   a failed one has llmContent as a string and `error: {message, type:"mcp_tool_error"}`.
//   An MCP text answer that is a bare JSON array fails the CLI's own validation and arrives
//   as such an error (its MCP client parses text as structured content, which must be an
//   object). velesdb-memory never sends one: its answers are objects, as text AND
//   structuredContent, and reach the hook as llmContent text (measured, recall-matrix e2e).
// - AfterAgent `{"decision":"deny","reason":…}` starts one more turn whose user prompt is
//   the reason verbatim; the next AfterAgent has `stop_hook_active: true`.
// - Hook `timeout` is in milliseconds (a timeout of 10 killed a hook after 10 ms).
// - Folder trust: headless runs refuse an untrusted workspace (exit 55), and in an untrusted
//   folder the CLI registers no hook from settings.json, user-level ones included (read in
//   0.61.0's hookRegistry, not measured interactively): the guard is off there.
// - The hook environment has GEMINI_SESSION_ID, GEMINI_PROJECT_DIR, GEMINI_CWD and
//   CLAUDE_PROJECT_DIR; the payload has session_id, transcript_path, cwd, hook_event_name and
//   timestamp.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { jsonAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { objectField, stringField } from "../core/payload.ts";
import { mcpToolName } from "../core/recall.ts";
import { fallbackRefusal } from "../core/texts.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { GEMINI } from "./descriptors/gemini.ts";
import {
  eventsOf,
  hookSpecificOutput,
  mcpToolOf,
  SESSION_START_EVENT,
  STOP_EVENT,
  tempStateProfile,
  type HostModule,
} from "./host.ts";
import { mcpResultOfLlmContent, recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { GEMINI };

/** The tools Gemini CLI edits files with (its EDIT_TOOL_NAMES; the descriptor's), and their target field. */
const GEMINI_EDIT_TARGET_FIELD = pathFieldsOf(GEMINI);

export function encodeGeminiAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      return jsonAnswer({}, decision.note);
    case "addContext":
      return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: decision.text }), decision.note);
    case "continue":
      // AfterAgent: "deny" is Gemini's word for "do not stop; here is the next prompt".
      return jsonAnswer({ decision: "deny", reason: decision.text }, decision.note);
    case "deny": {
      // An empty reason would reach the model as "Tool execution blocked: " and nothing else.
      const deny = { decision: "deny", reason: decision.reason || fallbackRefusal() };
      return { ...jsonAnswer(deny, decision.note), ifStdoutFails: denyOnStderr(deny) };
    }
    case "replaceOutput":
    case "summariserInstructions":
      // AfterTool "deny" would turn the result into an error, not replace it; PreCompress
      // output is unused. Both map to the pass, deliberately.
      return jsonAnswer({}, decision.note);
    default:
      return decision satisfies never;
  }
}

/**
 * denyOnStderr(deny) → the deny for when stdout cannot be written: the same JSON object on
 * stderr, exit 0. Gemini parses stderr when stdout is empty (hookRunner: `stdout.trim() ||
 * stderr.trim()`), so the refusal survives without the exit-2 form the other hosts fall back
 * to: this host must never see an exit code other than 0 or 1. No diagnostic line goes with
 * it, since one more line would make stderr unparseable.
 */
export function denyOnStderr(deny: { decision: string; reason: string }): HookAnswer {
  return { stdout: "", stderr: `${JSON.stringify(deny)}\n`, exitCode: 0 };
}

/** BeforeTool: the recall-before-edit guard on `tool_input.file_path` of write_file and replace. */
async function geminiBeforeTool(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const field =
    tool !== undefined && Object.hasOwn(GEMINI_EDIT_TARGET_FIELD, tool) ? GEMINI_EDIT_TARGET_FIELD[tool] : undefined;
  if (field === undefined) return pass(input.inputProblem);
  const target = stringField(objectField(input.payload, "tool_input") ?? {}, field);
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

// A successful MCP answer arrives as "<untrusted_context>\n…\n</untrusted_context>": the wrapper
// goes, so the recall rule reads the server's own text.
const UNTRUSTED_WRAPPER = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/;

/** withoutUntrustedWrapper("<untrusted_context>\n[]\n</untrusted_context>") → "[]"; other text as it is. */
export const withoutUntrustedWrapper = (text: string): string => UNTRUSTED_WRAPPER.exec(text)?.[1] ?? text;

/** AfterTool: recall evidence for velesdb-memory MCP tools, named by `mcp_context`. */
async function geminiAfterTool(input: HookInput): Promise<Decision> {
  const mcp = objectField(input.payload, "mcp_context") ?? {};
  return recordEvidenceAndPass(input, {
    toolName: mcpToolName(mcp.server_name, mcp.tool_name),
    toolInput: input.payload.tool_input,
    toolResponse: mcpResultOfLlmContent(input.payload.tool_response, withoutUntrustedWrapper),
    form: "structured",
  });
}

export const gemini: HostModule = {
  descriptor: GEMINI,
  profile: { ...tempStateProfile("gemini", "gemini-", mcpToolOf(GEMINI)), transcriptFormat: "gemini-jsonl" },
  payloadNamesEvent: true,
  // Gemini denies the tool on any exit code but 0 and 1 when the answer is not JSON: a usage
  // error (a stale registration) must not refuse every matched tool.
  usageExitCode: 1,
  events: eventsOf(GEMINI, {
    "session-start": SESSION_START_EVENT,
    "before-tool": { failure: "closed", run: geminiBeforeTool },
    "after-tool": { failure: "open", run: geminiAfterTool },
    "after-agent": STOP_EVENT,
  }),
  encode: encodeGeminiAnswer,
};
