// Claude Code (measured on 2.1.328; SPEC §4.1). Quirks that shape this encoder:
// - `hookEventName` is mandatory inside hookSpecificOutput; without it the host drops the
//   whole answer silently.
// - Stop continues without an error through hookSpecificOutput.additionalContext; the host
//   sets `stop_hook_active` on the next Stop and caps 8 consecutive continuations.
// - PreCompact stdout is appended verbatim to the summariser prompt, so its pass is *no
//   output at all*: `{}` would reach the summariser as literal text.
// - PreToolUse denies through permissionDecision; exit 2 also blocks but shows the model our
//   command line instead of the reason.
import { diagnosticLine, jsonAnswer, type Decision, type HookAnswer } from "../core/decision.ts";
import { genericStopDecision, preCompactDecision, sessionStartDecision } from "../core/lifecycle.ts";
import { defaultStateDirectory } from "../core/state.ts";
import { hookSpecificOutput, type HostModule } from "./host.ts";

function encodeClaudeAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      if (wireName === "PreCompact") return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
      return jsonAnswer({}, decision.note);
    case "addContext":
    case "continue":
      return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: decision.text }), decision.note);
    case "deny":
      return jsonAnswer(
        hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: decision.reason }),
        decision.note,
      );
    case "replaceOutput":
      return jsonAnswer(hookSpecificOutput(wireName, { updatedToolOutput: decision.toolResponse }), decision.note);
    case "summariserInstructions":
      return { stdout: `${decision.text}\n`, stderr: diagnosticLine(decision.note), exitCode: 0 };
    default:
      return decision satisfies never;
  }
}

export const claude: HostModule = {
  profile: {
    name: "claude",
    statePrefix: "",
    stateDirectory: (env) => defaultStateDirectory(env),
    stopFlagUnreliable: false,
  },
  payloadNamesEvent: true,
  events: {
    "session-start": { wireName: "SessionStart", run: sessionStartDecision },
    stop: { wireName: "Stop", run: (input) => genericStopDecision(input) },
    "pre-compact": { wireName: "PreCompact", run: preCompactDecision },
  },
  encode: encodeClaudeAnswer,
};
