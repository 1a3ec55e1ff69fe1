// Codex CLI (measured on 0.169.0; docs/contract.md §4.2). Quirks that shape this encoder:
// - Stop accepts only `{"decision":"block","reason":…}`; hookSpecificOutput on Stop is
//   rejected. Codex has no continuation cap, so the Stop rule itself must stop continuing.
// - SessionStart additionalContext is cut by the host near 10 000 characters; we cut first,
//   at a line boundary, so the load call (at the top) always survives whole.
// - PostToolUse `{"decision":"block","reason":R}` makes R the whole function_call_output the
//   model reads, INSTEAD of the tool's output (measured on 0.169.0 with `seq 1 30`: the next
//   request's output for that call was exactly R; Codex logs "error=R" and "PostToolUse
//   Blocked" on stderr). So Bash compression goes through it: R is the compiled view and the
//   archive footer. The Bash `tool_response` is the output as one string.
// - PreCompact has no channel that reaches a model, so instructions map to a pass.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { compressCommandOutput } from "../core/compress-gates.ts";
import { jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { objectField, stringField } from "../core/payload.ts";
import { fallbackRefusal } from "../core/texts.ts";
import { CODEX } from "./descriptors/codex.ts";
import type { EditTarget } from "./descriptors/descriptor.ts";
import {
  eventsOf,
  hookSpecificOutput,
  mcpToolOf,
  SESSION_START_EVENT,
  STOP_EVENT,
  tempStateProfile,
  type HostModule,
} from "./host.ts";
import { evidenceOnlyPostToolUse } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { CODEX };

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
      return jsonAnswer(
        hookSpecificOutput(wireName, { additionalContext: clampContext(decision.text) }),
        decision.note,
      );
    case "continue":
      return jsonAnswer({ decision: "block", reason: decision.text }, decision.note);
    case "deny": {
      // Codex ignores a deny whose reason is empty.
      const reason = decision.reason || fallbackRefusal();
      return jsonDenyAnswer(
        hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: reason }),
        reason,
        decision.note,
      );
    }
    case "replaceOutput":
      return jsonAnswer(
        typeof decision.toolResponse.text === "string" ? { decision: "block", reason: decision.toolResponse.text } : {},
        decision.note,
      );
    case "summariserInstructions":
      return jsonAnswer({}, decision.note);
    default:
      return decision satisfies never;
  }
}

/**
 * PreToolUse: the guard over every target of an apply_patch (docs/contract.md §6.4). The raw patch arrives
 * in `tool_input.command`. Edit and Write are in the registered matcher for hosts that expose
 * Claude-style file tools; they name their target in `file_path`.
 */
async function codexPreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const toolInput = objectField(input.payload, "tool_input") ?? {};
  const edit: EditTarget | undefined =
    tool !== undefined && Object.hasOwn(CODEX.editTools, tool)
      ? CODEX.editTools[tool as keyof typeof CODEX.editTools]
      : undefined;
  if (edit === undefined) return pass(input.inputProblem);
  if (edit.kind === "patch") {
    const { parsePatchTargets } = await import("../core/patch.ts");
    return guardEditDecision(
      input,
      parsePatchTargets((edit.field === undefined ? undefined : stringField(toolInput, edit.field)) ?? ""),
    );
  }
  const target = edit.kind === "path" ? stringField(toolInput, edit.field) : undefined;
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

/** PostToolUse: recall evidence; Bash output compiled, its view given back as the block reason. */
async function codexPostToolUse(input: HookInput): Promise<Decision> {
  const output = input.payload.tool_response;
  if (input.payload.tool_name !== CODEX.shellTool || typeof output !== "string") return evidenceOnlyPostToolUse(input);
  const compressed = await compressCommandOutput(input, {
    toolName: "Bash",
    command: stringField(objectField(input.payload, "tool_input") ?? {}, "command"),
    stdout: output,
    original: { stdout: output },
    timeoutS: CODEX.events["post-tool-use"].timeoutS,
  });
  if (compressed.kind === "untouched") return compressed.decision;
  return { kind: "replaceOutput", toolResponse: { text: compressed.text }, note: compressed.note };
}

export const codex: HostModule = {
  descriptor: CODEX,
  profile: { ...tempStateProfile("codex", "codex-", mcpToolOf(CODEX)), transcriptFormat: "codex-rollout" },
  payloadNamesEvent: true,
  events: eventsOf(CODEX, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": { failure: "closed", run: codexPreToolUse },
    "post-tool-use": { failure: "open", run: codexPostToolUse },
  }),
  encode: encodeCodexAnswer,
};
