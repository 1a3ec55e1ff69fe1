// OpenCode (measured on opencode-ai 1.18.33, platform binary opencode-linux-x64 1.18.33,
// offline against a chat-completions mock through a custom `@ai-sdk/openai-compatible`
// provider). OpenCode has no command hooks: its hooks are functions of an in-process plugin.
// Our plugin (src/install/clients/opencode-plugin.ts, written by `install --client opencode`)
// spawns `velesdb-hooks opencode <event>` with a JSON payload of its own making and applies the
// answer; every rule is here. Measured facts that shape this host:
// - Plugins load from `plugin/*.js` in OpenCode's config directory (`$XDG_CONFIG_HOME/opencode`,
//   else `~/.config/opencode`). The factory gets `{client, project, worktree, directory,
//   experimental_workspace, serverUrl, $}`; `directory` is the session's working directory.
// - No session-start hook: `experimental.chat.system.transform(input {sessionID, model},
//   output {system: string[]})` runs before EVERY model request; a pushed string reaches the
//   model as a system message. The plugin asks us once per session and pushes the cached text.
// - `tool.execute.before(input {tool, sessionID, callID}, output {args})` runs before the tool
//   and its permission check; a thrown Error fails the call and the model reads its message
//   verbatim (the part's state is `error`). Edit tools for an openai-compatible model: `write
//   {filePath, content}` and `edit {filePath, oldString, newString, replaceAll}`; `patch`,
//   `multiedit` (filePath) and `apply_patch` (patchText) are guarded too where a model has them.
// - `tool.execute.after(input {tool, sessionID, callID, args}, output)`: MCP tools are named
//   `<server>_<tool>` (`velesdb-memory_recall_fused`) and `output` is the raw MCP result
//   `{content, isError}` (plus structuredContent when the server sends it). It does not fire for
//   a call answered isError, so a failed recall never unlocks.
// - `bash`'s output is `{title, output, metadata {output, exit, truncated, outputPath?}}`;
//   setting `output.output` replaces exactly what the model reads. Above OpenCode's own cut
//   (measured: `seq 1 5000`, 23 893 bytes) `output` holds the tail after "...output truncated...
//   Full output saved to: <outputPath>", `truncated` is true and outputPath holds the whole
//   output in OpenCode's data directory: that file is what we compile, and it is the archive.
// - No stop hook and no `stop_hook_active`: the `event` hook sees `session.idle {sessionID}`,
//   and `client.session.promptAsync({path: {id}, body: {parts: [{type: "text", text}]}})`
//   starts one more turn in a long-lived process (`opencode serve`, the TUI). The plugin sets
//   `stop_hook_active` itself on the idle that follows a continuation it started. `opencode
//   run` (without --attach) exits at the first idle and cuts a continuation off.
// - `experimental.session.compacting(input {sessionID}, output {context: string[]})`: a string
//   pushed onto `context` is appended to the summariser's prompt. A `session.compacted` event
//   follows; the plugin then asks for session-start again with `source: "compact"`.
// - Traps: OpenCode runs `npm install @opencode-ai/plugin` in its config directory at start
//   (it stalls ~70 s offline unless `node_modules/` and a lockfile naming it exist), so our
//   plugin imports nothing but `node:child_process`. `--pure` skips plugins.
//
// Payloads (the plugin's): `{session_id, cwd, source?}`, plus `tool_name`, `tool_input`,
// `tool_response` at the tool events and `stop_hook_active` at stop. Answers: one JSON object,
// `{}` or one of `system`, `deny`, `output`, `prompt`, `context` (a string); a deny falls back
// to exit 2 with the reason on stderr.
import { compressCommandOutput } from "../core/compress-gates.ts";
import { jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { isPlainObject, objectField, stringField } from "../core/payload.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { OPENCODE, type OpencodeLike } from "./descriptors/opencode.ts";
import {
  eventsOf,
  mcpToolOf,
  SESSION_START_EVENT,
  STOP_EVENT,
  tempStateProfile,
  type HostModule,
  PRE_COMPACT_EVENT,
} from "./host.ts";
import { evidenceFromSpelledMcpTool, guardNamedEditTool } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { OPENCODE };

const OPENCODE_EDIT_TARGET_FIELD = pathFieldsOf(OPENCODE);

// `<server>_<tool>`, the server key sanitised by OpenCode ([^a-zA-Z0-9_-] → _).
const OPENCODE_VELESDB_TOOL = new RegExp(OPENCODE.velesdbTools.split);

function encodeOpencodeAnswer(_wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      return jsonAnswer({}, decision.note);
    case "addContext":
      return jsonAnswer({ system: decision.text }, decision.note);
    case "continue":
      return jsonAnswer({ prompt: decision.text }, decision.note);
    case "deny":
      return jsonDenyAnswer({ deny: decision.reason }, decision.reason, decision.note);
    case "replaceOutput":
      return jsonAnswer(
        typeof decision.toolResponse.output === "string" ? { output: decision.toolResponse.output } : {},
        decision.note,
      );
    case "summariserInstructions":
      return jsonAnswer({ context: decision.text }, decision.note);
    default:
      return decision satisfies never;
  }
}

/** tool.execute.before: the guard over the edit tools (filePath) and apply_patch (patchText): the descriptor's. */
async function opencodePreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const edit =
    tool !== undefined && Object.hasOwn(OPENCODE.editTools, tool)
      ? OPENCODE.editTools[tool as keyof typeof OPENCODE.editTools]
      : undefined;
  if (edit?.kind === "patch") {
    const patchText = stringField(objectField(input.payload, "tool_input") ?? {}, edit.field) ?? "";
    const { parsePatchTargets } = await import("../core/patch.ts");
    return guardEditDecision(input, parsePatchTargets(patchText));
  }
  return guardNamedEditTool(input, OPENCODE_EDIT_TARGET_FIELD);
}

/**
 * opencodePostToolUse(OPENCODE) → tool.execute.after: recall evidence from a velesdb-memory MCP
 * result; bash compression within that host's deadline (Kilo, OpenCode's fork, passes its own
 * descriptor, whose timeout is its own).
 */
export function opencodePostToolUse(descriptor: OpencodeLike): (input: HookInput) => Promise<Decision> {
  return async (input) => {
    const tool = stringField(input.payload, "tool_name") ?? "";
    if (tool === descriptor.shellTool) return compressOpencodeBash(input, descriptor);
    return evidenceFromSpelledMcpTool(input, OPENCODE_VELESDB_TOOL);
  };
}

/** bash: the model's `output` (or, when OpenCode cut it, its saved file) compiled (docs/contract.md §8). */
async function compressOpencodeBash(input: HookInput, descriptor: OpencodeLike): Promise<Decision> {
  const response = input.payload.tool_response;
  if (!isPlainObject(response) || typeof response.output !== "string")
    return pass("bash output is not {output: string}; left as is");
  const metadata = objectField(response, "metadata") ?? {};
  const savedPath = metadata.truncated === true ? stringField(metadata, "outputPath") : undefined;
  const compressed = await compressCommandOutput(input, {
    toolName: "Bash",
    command: stringField(objectField(input.payload, "tool_input") ?? {}, "command"),
    stdout: response.output,
    // OpenCode's file is in its data directory and kept: it is the archive the footer names.
    saved: savedPath === undefined ? undefined : { path: savedPath, temporary: false },
    original: { stdout: response.output },
    timeoutS: descriptor.events["post-tool-use"].timeoutS,
  });
  if (compressed.kind === "untouched") return compressed.decision;
  return { kind: "replaceOutput", toolResponse: { output: compressed.text }, note: compressed.note };
}

export const opencode: HostModule = {
  descriptor: OPENCODE,
  profile: { ...tempStateProfile("opencode", "opencode-", mcpToolOf(OPENCODE)), contextResentEachRequest: true },
  payloadNamesEvent: false,
  events: eventsOf(OPENCODE, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-compact": PRE_COMPACT_EVENT,
    "pre-tool-use": { failure: "closed", run: opencodePreToolUse },
    "post-tool-use": { failure: "open", run: opencodePostToolUse(OPENCODE) },
  }),
  encode: encodeOpencodeAnswer,
};
