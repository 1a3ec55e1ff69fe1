// GitHub Copilot CLI (measured on @github/copilot 1.0.102, offline against a local
// chat-completions mock; payloads in fixtures/payloads/copilot/). Quirks that shape this host:
// - We register the camelCase events (sessionStart, preToolUse, postToolUse, agentStop). The
//   PascalCase ones get a half-translated payload: Claude's tool names (`Write` for create,
//   `Edit` for apply_patch, `Bash`) over Copilot's arguments (`path`, not `file_path`), and an
//   apply_patch whose patch text is a bare string — a Claude reader would misjudge all of it.
//   camelCase payloads carry `sessionId`, `cwd`, `toolName`, `toolArgs` (an object; the raw
//   patch string for apply_patch) and `toolResult {resultType, textResultForLlm}`.
// - Edit tools depend on the model: `edit` and `create` (target in `toolArgs.path`) for the
//   models Copilot knows; `apply_patch` (a freeform tool, like Codex's) otherwise.
// - sessionStart `additionalContext` reaches the model as a separate user message placed
//   before the prompt, in every request of the session. `--resume` fires it again with
//   `source: "resume"` and the same `sessionId`, so recall evidence and Stop markers carry over.
// - preToolUse `permissionDecision:"deny"`: the tool does not run (under --allow-all-tools too)
//   and the model reads the tool result `Denied by preToolUse hook: <reason>`. A preToolUse
//   hook that cannot run (missing binary) DENIES the tool ("hook errored"); so does exit 2, but
//   the model then reads `hook exited with code 2`, not stderr: exit 2 is only the fallback
//   when the JSON deny cannot be written. A timeout lets the tool run.
// - agentStop `decision:"block"` + `reason`: one more turn whose user message is the reason
//   (after a `<current_datetime>` line); the next agentStop payload has snake_case
//   `stop_hook_active: true` amid camelCase; the host stops honouring blocks after 8.
// - MCP tools are `<server>-<tool>` (`velesdb-memory-recall_fused`). A failed call fires only
//   postToolUseFailure, so a failed recall never reaches postToolUse and never counts.
// - No session id in the hook environment (it has COPILOT_PROJECT_DIR, CLAUDE_PROJECT_DIR,
//   COPILOT_HOOK_DIR): only the payload's `sessionId` names the session. Copilot does not run
//   the hooks of ~/.claude/settings.json.
// - `timeoutSec` is in seconds. postToolUse `modifiedResult: {resultType, textResultForLlm}`
//   DOES replace the result the model reads (its docs say SDK only); `additionalContext` is
//   appended to it after "Additional guidance from postToolUse hooks:". preCompact is a
//   notification per the docs (not measured) and is not registered.
// - `bash`'s result is one string: the output (its last line break dropped), then
//   "\n<shellId: N completed with exit code C>". Measured: 13.9 and 17.9 KB stay inline; from
//   ~20 KB (21.5 KB measured) the text is "Output too large to read at once (21.5 KB). Saved
//   to: <$TMPDIR/…-copilot-tool-output-….txt>", advice, a 500-character preview, then the
//   footer; that file holds the whole output and is DELETED when the session ends. So Bash
//   compression compiles the inline output or that file's content, archives it in our state
//   (never pointing at Copilot's file), and keeps the `<shellId …>` footer with its exit code.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import * as path from "node:path";
import { MAX_NESTING, compressCommandOutput, nestedDeeperThan } from "../core/compress-gates.ts";
import type { SavedOutput } from "../core/compress.ts";
import { joinNotes, jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { isPlainObject, objectField, stringField } from "../core/payload.ts";
import { isVelesdbRecallToolName, mcpToolName } from "../core/recall.ts";
import { COPILOT } from "./descriptors/copilot.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { eventsOf, mcpToolOf, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";
import { recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { COPILOT };

/** The tools that name their one target in a field of `toolArgs` (the descriptor's: `path`). */
const COPILOT_PATH_EDIT_FIELD = pathFieldsOf(COPILOT);

// `<server>-<tool>` (the descriptor's spelling): the server key itself holds a hyphen
// (velesdb-memory) and the tool names never do, so the hyphen after the server key splits them.
const COPILOT_VELESDB_TOOL = new RegExp(COPILOT.velesdbTools.split);

function encodeCopilotAnswer(_wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
    case "summariserInstructions":
      return jsonAnswer({}, decision.note);
    case "replaceOutput":
      return jsonAnswer(
        typeof decision.toolResponse.textResultForLlm === "string" ? { modifiedResult: decision.toolResponse } : {},
        decision.note,
      );
    case "addContext":
      return jsonAnswer({ additionalContext: decision.text }, decision.note);
    case "continue":
      return jsonAnswer({ decision: "block", reason: decision.text }, decision.note);
    case "deny":
      return jsonDenyAnswer(
        { permissionDecision: "deny", permissionDecisionReason: decision.reason },
        decision.reason,
        decision.note,
      );
    default:
      return decision satisfies never;
  }
}

/** preToolUse: the guard over `edit`/`create` (`toolArgs.path`) and apply_patch (the raw patch). */
async function copilotPreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "toolName");
  const toolArgs = input.payload.toolArgs;
  // apply_patch: the raw patch is `toolArgs` itself (the descriptor's patch tool has no field).
  if (
    tool !== undefined &&
    Object.hasOwn(COPILOT.editTools, tool) &&
    COPILOT.editTools[tool as keyof typeof COPILOT.editTools].kind === "patch"
  ) {
    const { parsePatchTargets } = await import("../core/patch.ts");
    return guardEditDecision(input, parsePatchTargets(typeof toolArgs === "string" ? toolArgs : ""));
  }
  const field =
    tool !== undefined && Object.hasOwn(COPILOT_PATH_EDIT_FIELD, tool) ? COPILOT_PATH_EDIT_FIELD[tool] : undefined;
  if (field === undefined) return pass(input.inputProblem);
  const target = isPlainObject(toolArgs) ? stringField(toolArgs, field) : undefined;
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

// Copilot's shell result: `<output>\n<shellId: …>`, or its "too large" notice naming the saved file.
const COPILOT_SHELL_FOOTER = /\n<shellId: [^\n]*>\s*$/;
const COPILOT_SAVED_OUTPUT = /^Output too large to read at once \(([0-9.]+) (B|KB|MB)\)\. Saved to: ([^\n]+)\n/;
// How Copilot 1.0.102 names that file (measured: `<$TMPDIR>/1796205494147-copilot-tool-output-
// 18218-c0002c00-6f1d-4250-90fa-59881311390c.txt`: the time it wrote it in ms, a number, a UUID;
// its bundled runtime matches `\d+-copilot-tool-output-` for the same files).
const COPILOT_SAVED_NAME =
  /^(\d{13})-copilot-tool-output-\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txt$/;
/** Copilot writes the file as the command ends, just before postToolUse: older is not this call's. */
const SAVED_FILE_MAX_AGE_MS = 60_000;
const CLOCK_SLACK_MS = 2_000;
/** Between the time in its name (when Copilot made the file) and its last write, on a loaded machine. */
const WRITE_SLACK_MS = 10_000;

/**
 * copilotSavedFile(notice, payload, env) → the saved output to read when the notice names a file
 * Copilot itself wrote for this call, else why not (docs/compression.md#copilots-saved-output: an output that merely began
 * with the notice made the hook read, compile and archive any file it named). Copilot's file is in
 * its temporary directory (the TMPDIR it gave us), named as it names them with a time within the
 * last minute, and, checked on the opened file: a regular file with one link, owned by this user,
 * modified when its name says, of the size the notice states.
 */
export function copilotSavedFile(
  notice: RegExpExecArray,
  payload: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): { ok: true; saved: SavedOutput } | { ok: false; problem: string } {
  const [, size, unit, file] = notice as unknown as [string, string, "B" | "KB" | "MB", string];
  const refused = (why: string) => ({
    ok: false as const,
    problem: `Copilot's saved output not read: ${why}; output left as is`,
  });
  const tmp = path.resolve(env.TMPDIR || "/tmp");
  if (!path.isAbsolute(file) || path.dirname(file) !== tmp)
    return refused("the file it names is not in Copilot's temporary directory");
  const name = COPILOT_SAVED_NAME.exec(path.basename(file));
  if (!name) return refused("the file it names is not named as Copilot names its saved outputs");
  const calledAt =
    typeof payload.timestamp === "number" && Number.isFinite(payload.timestamp) ? payload.timestamp : Date.now();
  const writtenAt = Number(name[1]);
  if (writtenAt > calledAt + CLOCK_SLACK_MS || writtenAt < calledAt - SAVED_FILE_MAX_AGE_MS)
    return refused("the file it names was not written during this call");
  const scale = unit === "MB" ? 1024 * 1024 : unit === "KB" ? 1024 : 1;
  const stated = Number(size) * scale;
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const trust = (st: import("node:fs").Stats): string => {
    if (st.nlink !== 1) return "it has more than one link";
    if (uid !== undefined && st.uid !== uid) return "it is not owned by this user";
    if (st.mtimeMs < writtenAt - CLOCK_SLACK_MS || st.mtimeMs > writtenAt + WRITE_SLACK_MS)
      return "it was modified after Copilot wrote it";
    // The notice rounds to one decimal of its unit.
    if (Math.abs(st.size - stated) > 0.05 * scale + 1)
      return `it holds ${st.size} bytes, not the ${size} ${unit} of the notice`;
    return "";
  };
  return { ok: true, saved: { path: file, temporary: true, trust } };
}

/** postToolUse on bash: the output (or Copilot's saved file) compiled; the shellId footer kept (docs/contract.md §8). */
async function compressCopilotBash(input: HookInput): Promise<Decision> {
  const result = objectField(input.payload, "toolResult") ?? {};
  // Copilot's result type is a word ("success", "failure", …); a result of another shape is not
  // one we know how to give back (fuzz seed 1884534106: an object there was carried back as is).
  if (typeof result.resultType !== "string") return pass("bash result has no resultType string; left as is");
  const text = stringField(result, "textResultForLlm");
  const footer = text === undefined ? null : COPILOT_SHELL_FOOTER.exec(text);
  if (text === undefined || !footer) return pass("bash result has no <shellId …> footer; left as is");
  const body = text.slice(0, footer.index);
  const notice = COPILOT_SAVED_OUTPUT.exec(body);
  let saved: SavedOutput | undefined;
  if (notice) {
    const file = copilotSavedFile(notice, input.payload, input.env);
    if (!file.ok) return pass(file.problem);
    saved = file.saved;
  }
  const toolArgs = input.payload.toolArgs;
  // The answer carries Copilot's result object back whole: a field nested deeper than
  // JSON.stringify can write (fuzz, seed -512651350: 55 196 levels) made the encoder overflow its
  // stack after the compiler ran, "internal error" instead of a clean refusal.
  if (nestedDeeperThan(result, MAX_NESTING))
    return pass(`compression refused: the toolResult nests deeper than ${MAX_NESTING} levels`);
  const compressed = await compressCommandOutput(input, {
    toolName: "Bash",
    command: isPlainObject(toolArgs) ? stringField(toolArgs, "command") : undefined,
    stdout: body,
    saved,
    original: { stdout: body },
    timeoutS: COPILOT.events["post-tool-use"].timeoutS,
  });
  if (compressed.kind === "untouched") return compressed.decision;
  return {
    kind: "replaceOutput",
    toolResponse: { ...result, textResultForLlm: compressed.text + footer[0] },
    note: compressed.note,
  };
}

/** postToolUse: recall evidence from a velesdb-memory tool's `textResultForLlm`; bash compression. */
async function copilotPostToolUse(input: HookInput): Promise<Decision> {
  if (stringField(input.payload, "toolName") === COPILOT.shellTool) return compressCopilotBash(input);
  const spelled = COPILOT_VELESDB_TOOL.exec(stringField(input.payload, "toolName") ?? "");
  if (!spelled) return pass(input.inputProblem);
  const toolName = mcpToolName(spelled[1], spelled[2]);
  if (toolName === undefined || !isVelesdbRecallToolName(toolName)) return pass(input.inputProblem);
  const result = objectField(input.payload, "toolResult") ?? {};
  // Only "success" shows an answer; the text of any other result type may be an error message.
  const resultType = stringField(result, "resultType");
  if (resultType !== "success")
    return pass(
      joinNotes(input.inputProblem, `recall not counted: resultType is ${JSON.stringify(resultType ?? null)}`),
    );
  return recordEvidenceAndPass(input, {
    toolName,
    toolInput: input.payload.toolArgs,
    toolResponse: result.textResultForLlm,
    form: "text",
  });
}

export const copilot: HostModule = {
  descriptor: COPILOT,
  profile: {
    ...tempStateProfile("copilot", "copilot-", mcpToolOf(COPILOT)),
    sessionIdField: "sessionId",
    contextResentEachRequest: true,
    // agentStop names the session's events.jsonl in `transcriptPath` (fixtures/transcripts/copilot/).
    transcriptFormat: "copilot-events",
  },
  payloadNamesEvent: false,
  events: eventsOf(COPILOT, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": { failure: "closed", run: copilotPreToolUse },
    "post-tool-use": { failure: "open", run: copilotPostToolUse },
  }),
  encode: encodeCopilotAnswer,
};
