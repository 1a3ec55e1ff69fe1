// Pi coding agent (measured on @mariozechner/pi-coding-agent 0.73.1 with pi-mcp-adapter 2.11.0,
// `pi --offline --no-session -p` against the chat-completions mock through a `models.json`
// provider). Pi has no command hooks: its hooks are events of an in-process extension. Ours
// (src/install/clients/pi-extension.ts, written by `install --client pi` into
// ~/.pi/agent/extensions/) spawns `velesdb-hooks pi <event>` with a payload of its own making
// and applies the answer; every rule is here. Measured facts that shape this host:
// - `before_agent_start` returns `{message}`: it reached the first request as a user message of
//   its own (there is no session-start event that can add context). The extension asks once.
// - `tool_call` returns `{block: true, reason}`: the model reads the reason verbatim as the tool
//   result and the tool does not run. Edit tools: `write {path, content}` and `edit {path,
//   edits}`; `path` may be relative to the session's cwd, which the guard resolves against.
// - `tool_result` may return `{content}`: for `bash` it replaces exactly what the model reads.
//   Pi cuts bash output itself (2000 lines or 50 KB, the tail kept, "[Showing lines …. Full
//   output: <file>]" appended, `details.fullOutputPath` a file in the temp directory): that
//   file, which outlives nothing we control, is compiled and archived by us.
// - MCP only through an extension: with pi-mcp-adapter 2.11.0 a call is the proxy tool `mcp`
//   `{tool, args}` (or a direct tool once the adapter's metadata cache exists); `tool_result`
//   has `isError` and `details {server, tool, mcpResult}` on success, `details {error:
//   "tool_error", mcpResult}` on a failed call. The recall rule reads mcpResult, with the error
//   flag and the adapter's `error` kept, as `mcp__<server>__<tool>`.
// - No stop hook, no `stop_hook_active`: `pi.sendUserMessage(text, {deliverAs: "followUp"})`
//   at the last `turn_end` (a turn with no tool result) starts one more turn, also in `-p`; at
//   `agent_end` it is dropped. The extension marks the turn after its continuation itself.
// - Compaction: `session_before_compact` can only cancel or replace the summary; nothing can be
//   added to the summariser's prompt, so there is no pre-compact event.
//
// Payloads (the extension's): `{session_id, cwd, source?}`, plus `tool_name`, `tool_input`,
// `tool_response` at the tool events and `stop_hook_active` at stop. Answers are OpenCode's
// (src/hosts/opencode.ts): `{}` or one of `system`, `deny`, `output`, `prompt`.
import { compressCommandOutput } from "../core/compress-gates.ts";
import { pass, type Decision } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { isPlainObject, objectField, stringField } from "../core/payload.ts";
import { mcpToolName } from "../core/recall.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { PI } from "./descriptors/pi.ts";
import { eventsOf, mcpToolOf, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";
import { opencode } from "./opencode.ts";
import { guardNamedEditTool, recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { PI };

// How the model names a velesdb-memory tool (the descriptor's `velesdb_memory_<tool>`):
// pi-mcp-adapter prefixes each server tool with the server's name, `-` made `_` (its default
// toolPrefix "server": types.ts formatToolName in pi-mcp-adapter 2.11.0), and that is the `tool`
// the model passes to the proxy tool `mcp` — measured: test/hosts/pi/pi.e2e.test.ts calls
// `mcp {tool: "velesdb_memory_recall_fused"}` and it reaches the server.
const PI_MCP_TOOL = mcpToolOf(PI);

// The edit tools the guard covers (the descriptor's: write and edit, both naming `path`).
const PI_EDIT_TARGET_FIELD = pathFieldsOf(PI);

/** tool_call: the guard over write and edit. */
async function piPreToolUse(input: HookInput): Promise<Decision> {
  return guardNamedEditTool(input, PI_EDIT_TARGET_FIELD);
}

/** tool_result: bash compression; recall evidence from a velesdb-memory call through the MCP adapter. */
async function piPostToolUse(input: HookInput): Promise<Decision> {
  const response = input.payload.tool_response;
  if (!isPlainObject(response)) return pass(input.inputProblem);
  if (stringField(input.payload, "tool_name") === PI.shellTool) return compressPiBash(input, response);
  const result = isPlainObject(response.mcpResult) ? response.mcpResult : undefined;
  // A failed call keeps its failure: the adapter's error, and Pi's own flag.
  const failure =
    response.isError === true
      ? { isError: true }
      : Object.hasOwn(response, "error") && response.error !== undefined
        ? { error: response.error }
        : {};
  return recordEvidenceAndPass(input, {
    toolName: mcpToolName(response.server, response.tool),
    toolInput:
      isPlainObject(input.payload.tool_input) && typeof input.payload.tool_input.args === "string"
        ? parseArgs(input.payload.tool_input.args)
        : input.payload.tool_input,
    toolResponse: result === undefined ? response : { ...result, ...failure },
    form: "structured",
  });
}

/** The proxy tool's `args` is a JSON string (pi-mcp-adapter 2.11.0): the recall's scope is in it. */
function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return undefined;
  }
}

/** bash: the text the model would read, or Pi's saved whole output when it cut it, compiled (docs/contract.md §8). */
async function compressPiBash(input: HookInput, response: Record<string, unknown>): Promise<Decision> {
  const content = Array.isArray(response.content) ? response.content : [];
  const texts = content
    .filter((part) => isPlainObject(part) && part.type === "text" && typeof part.text === "string")
    .map((part) => (part as { text: string }).text);
  if (texts.length !== 1 || response.isError === true)
    return pass("bash result is not one text block of a command that ran; left as is");
  const savedPath = response.truncated === true ? stringField(response, "fullOutputPath") : undefined;
  const compressed = await compressCommandOutput(input, {
    toolName: "Bash",
    command: stringField(objectField(input.payload, "tool_input") ?? {}, "command"),
    stdout: texts[0]!,
    // Pi's file is in the temp directory, which outlives nothing we control: its content is
    // archived by us, and only a file of this user's with one link is read.
    saved: savedPath === undefined ? undefined : { path: savedPath, temporary: true, trust: ownSingleLinkFile },
    original: { stdout: texts[0]! },
    timeoutS: PI.events["post-tool-use"].timeoutS,
  });
  if (compressed.kind === "untouched") return compressed.decision;
  return { kind: "replaceOutput", toolResponse: { output: compressed.text }, note: compressed.note };
}

/** trust(stats) for Pi's saved output: "" for a file of this user's with one link, else why not. */
function ownSingleLinkFile(stats: import("node:fs").Stats): string {
  if (stats.nlink !== 1) return "it has more than one link";
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  return uid !== undefined && stats.uid !== uid ? "it is not owned by this user" : "";
}

export const pi: HostModule = {
  descriptor: PI,
  profile: tempStateProfile("pi", "pi-", PI_MCP_TOOL),
  payloadNamesEvent: false,
  events: eventsOf(PI, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": { failure: "closed", run: piPreToolUse },
    "post-tool-use": { failure: "open", run: piPostToolUse },
  }),
  // OpenCode's answers, read by the same kind of extension.
  encode: opencode.encode,
};
