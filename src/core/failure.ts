// What an event answers when its rule throws (docs/contract.md §10). Each event names its policy
// (`failure` on HookEvent, src/hosts/host.ts): advisory hooks open, since a bug in a reminder
// must never break the user's session; the edit guard closes, since an edit it could not
// check is an edit it did not check — but only in a repository that opted in, so a
// user-wide install never blocks an unrelated project because of our bug.
// Loaded only on that path: a hook that does not throw never evaluates this module.
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";

export type FailurePolicy = "open" | "closed";

/** failureDecision("closed", input, "boom") → a refusal in an opted-in cwd, else a pass; never throws. */
export async function failureDecision(policy: FailurePolicy, input: HookInput, reason: string): Promise<Decision> {
  if (policy === "open") return pass(`internal error, passing: ${reason}`);
  try {
    const { resolveProjectIdentity } = await import("./identity.ts");
    const identity = resolveProjectIdentity(input.cwd);
    if (!identity.enforceLearningLoop) return pass(`internal error, passing (the cwd is not opted in): ${reason}`);
    const { guardInternalErrorRefusal } = await import("./texts.ts");
    return {
      kind: "deny",
      reason: guardInternalErrorRefusal(identity.root),
      note: `internal error, refusing: ${reason}`,
    };
  } catch (error) {
    // Even the policy lookup failed: nothing is known about the repository, so nothing is blocked.
    return pass(`internal error, passing: ${reason}; ${error instanceof Error ? error.message : String(error)}`);
  }
}
