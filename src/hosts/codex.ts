// Codex CLI (measured on 0.169.0; SPEC §4.2). Quirks that shape this encoder:
// - Stop accepts only `{"decision":"block","reason":…}`; hookSpecificOutput on Stop is
//   rejected. Codex has no continuation cap, so the Stop rule itself must stop continuing.
// - SessionStart additionalContext is cut by the host near 10 000 characters; we cut first,
//   at a line boundary, so the load call (at the top) always survives whole.
// - PostToolUse cannot replace a tool result: `decision:block` would *discard* the result and
//   show our text instead. A replacement is therefore mapped to a pass, deliberately.
// - PreCompact has no channel that reaches a model, so instructions map to a pass.
//
// Rules are imported inside each event, so a hook loads only its own event's code (SPEC §12).
import { jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { objectField, stringField } from "../core/payload.ts";
import { fallbackRefusal } from "../core/texts.ts";
import { hookSpecificOutput, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";

export const CODEX_CONTEXT_LIMIT = 9000;

/** clampContext(text, n) → text cut at the last line break before n characters. */
export function clampContext(text: string, limit = CODEX_CONTEXT_LIMIT): string {
  if (text.length <= limit) return text;
  const cut = text.lastIndexOf("\n", limit);
  return text.slice(0, cut > 0 ? cut : limit);
}

export function encodeCodexAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      return jsonAnswer({}, decision.note);
    case "addContext":
      return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: clampContext(decision.text) }), decision.note);
    case "continue":
      return jsonAnswer({ decision: "block", reason: decision.text }, decision.note);
    case "deny": {
      // Codex ignores a deny whose reason is empty.
      const reason = decision.reason || fallbackRefusal();
      return jsonDenyAnswer(hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: reason }), reason, decision.note);
    }
    case "replaceOutput":
    case "summariserInstructions":
      return jsonAnswer({}, decision.note);
    default:
      return decision satisfies never;
  }
}

/**
 * PreToolUse: the guard over every target of an apply_patch (SPEC §6.4). The raw patch arrives
 * in `tool_input.command`. Edit and Write are in the registered matcher for hosts that expose
 * Claude-style file tools; they name their target in `file_path`.
 */
async function codexPreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const toolInput = objectField(input.payload, "tool_input") ?? {};
  if (tool !== "apply_patch" && tool !== "Edit" && tool !== "Write") return pass(input.inputProblem);
  const { guardEditDecision } = await import("../core/guard.ts");
  if (tool === "apply_patch") {
    const { parsePatchTargets } = await import("../core/patch.ts");
    return guardEditDecision(input, parsePatchTargets(stringField(toolInput, "command") ?? ""));
  }
  const target = stringField(toolInput, "file_path");
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

export const codex: HostModule = {
  profile: tempStateProfile("codex", "codex-"),
  payloadNamesEvent: true,
  events: {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": { wireName: "PreToolUse", failure: "closed", run: codexPreToolUse },
    // Codex cannot replace a tool result, so PostToolUse only records recall evidence.
    "post-tool-use": { wireName: "PostToolUse", failure: "open", run: async (input) => (await import("./tool-events.ts")).evidenceOnlyPostToolUse(input) },
  },
  encode: encodeCodexAnswer,
};
