// Claude Code's hooks as Cursor runs them. Cursor loads the hooks in ~/.claude/settings.json
// (and the project's .claude/settings*.json) and runs them with its own payloads; from its
// documentation (https://cursor.com/docs/reference/third-party-hooks, https://cursor.com/docs/hooks),
// not measured — no Cursor runs here:
// - Every payload carries `cursor_version`; events arrive under Cursor's camelCase names
//   (`preToolUse`, `stop`, …), with `conversation_id`, `workspace_roots`, and no Claude
//   `stop_hook_active`.
// - Claude's Edit and Write both become Cursor's `Write`, Bash becomes `Shell`; MCP tools are
//   not `mcp__<server>__<tool>`, so our PostToolUse matcher never sees a recall and no recall
//   evidence can ever be recorded.
// - A Claude-format deny shows its reason to the user (`user_message`), not to the model.
// - Stop: `followup_message` (or Claude's flat decision:block) is submitted as the next user
//   message; imported Claude hooks have no loop limit of their own.
// - sessionStart takes `additional_context`; preCompact and postToolUse (for non-MCP tools)
//   cannot change what the model reads.
//
// So here the guard passes: a refusal that no recall could ever lift would only strand the
// user. SessionStart and the Stop checkpoint keep working in Cursor's own answer shapes, and a
// Stop whose state is broken never continues (nothing would stop the loop).
import * as path from "node:path";
import { jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { stringField } from "../core/payload.ts";
import { CLAUDE } from "./descriptors/claude.ts";
import { eventsOf, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";

/** Cursor's own answer shapes (its hooks documentation). */
export function encodeCursorAnswer(_wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "addContext":
      return jsonAnswer({ additional_context: decision.text }, decision.note);
    case "continue":
      return jsonAnswer({ followup_message: decision.text }, decision.note);
    case "deny":
      // Exit 2 blocks on Cursor too: the fallback should stdout fail.
      return jsonDenyAnswer(
        { permission: "deny", user_message: decision.reason, agent_message: decision.reason },
        decision.reason,
        decision.note,
      );
    case "pass":
    case "replaceOutput":
    case "summariserInstructions":
      return jsonAnswer({}, decision.note);
    default:
      return decision satisfies never;
  }
}

const passes = (input: HookInput): Decision => pass(input.inputProblem);

/**
 * inWorkspace(input) → the input with the first workspace root as its cwd when the payload has
 * no `cwd` (Cursor's lifecycle payloads have none, and it runs user hooks from ~/.cursor/).
 */
export function inWorkspace(input: HookInput): HookInput {
  if (stringField(input.payload, "cwd") !== undefined) return input;
  const roots = input.payload.workspace_roots;
  const first: unknown = Array.isArray(roots) ? roots[0] : undefined;
  // Only an absolute path without NUL can name a directory (a NUL would throw in any syscall).
  const root = typeof first === "string" && path.isAbsolute(first) && !first.includes("\0") ? first : undefined;
  return root === undefined ? input : { ...input, cwd: root };
}

export const claudeInCursor: HostModule = {
  // Claude's registered hooks, so Claude's descriptor: Cursor runs what the installer wrote for Claude.
  descriptor: CLAUDE,
  // Claude's state (same kinds), but Cursor never says a Stop is a continuation; its MCP names are not Claude's.
  profile: { ...tempStateProfile("claude", "", (tool) => tool), stopFlagUnreliable: true },
  payloadNamesEvent: false,
  events: eventsOf(CLAUDE, {
    "session-start": { failure: "open", run: (input) => SESSION_START_EVENT.run(inWorkspace(input)) },
    stop: { failure: "open", run: (input) => STOP_EVENT.run(inWorkspace(input)) },
    "pre-compact": { failure: "open", run: passes },
    // The guard passes under Cursor (see above), so it has nothing to fail closed on.
    "pre-tool-use": { failure: "open", run: passes },
    "post-tool-use": { failure: "open", run: passes },
  }),
  encode: encodeCursorAnswer,
};
