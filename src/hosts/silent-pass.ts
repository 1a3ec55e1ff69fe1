// The encoder two Claude-shaped hosts share: Factory Droid and CodeBuddy Code both take a
// hook's plain stdout as context (Droid showed a SessionStart `{}` to the model as a user
// message; CodeBuddy's docs say SessionStart stdout is appended to the context), so a pass, and
// every decision they have no channel for, is no output at all. They differ only in how Stop
// continues (src/hosts/droid.ts, src/hosts/codebuddy.ts).
import { diagnosticLine, jsonAnswer, jsonDenyAnswer, type Decision, type HookAnswer } from "../core/decision.ts";
import { hookSpecificOutput, type HostModule } from "./host.ts";

/** silentPassEncoder(text => ({decision: "block", reason: text})) → such a host's encoder. */
export function silentPassEncoder(continueAnswer: (text: string) => Record<string, unknown>): HostModule["encode"] {
  return (wireName: string, decision: Decision): HookAnswer => {
    switch (decision.kind) {
      case "pass":
      case "replaceOutput":
      case "summariserInstructions":
        return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
      case "addContext":
        return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: decision.text }), decision.note);
      case "continue":
        return jsonAnswer(continueAnswer(decision.text), decision.note);
      case "deny":
        return jsonDenyAnswer(
          hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: decision.reason }),
          decision.reason,
          decision.note,
        );
      default:
        return decision satisfies never;
    }
  };
}
