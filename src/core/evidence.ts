// Recall evidence (docs/contract.md §6.2): after a successful velesdb-memory recall, write the marker that
// unlocks edits for one (session, repository). Which repository is the hard part: a refused
// edit may have queued a repository other than the cwd's (pending-recall), and the recall that
// follows must unlock exactly that one — never a neighbour with the same project name, never
// the cwd's repository on the strength of a recall scoped elsewhere. Every doubt marks nothing.
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity } from "./identity.ts";
import { classifyRecall, isVelesdbRecallToolName, type RecallResponseForm, type RecallScope } from "./recall.ts";
import { recordMemoryDown, transportFailureOf } from "./memory-down.ts";
import { listRecords, PENDING_RECALL, RECALL, removeRecordFile, type StoredRecord } from "./records.ts";
import { markerPath, repositoryIdentity, writePrivateFile, type StateStore } from "./state.ts";
import { noteStat } from "./stats-note.ts";

export interface ToolCall {
  readonly toolName: unknown;
  readonly toolInput: unknown;
  readonly toolResponse: unknown;
  readonly form: RecallResponseForm;
}

/**
 * recordRecallEvidence(input, call) → a note for stderr ("" when there is nothing to say).
 * Never changes the tool result: the caller still answers its pass (or compression).
 */
export function recordRecallEvidence(input: HookInput, call: ToolCall): string {
  if (typeof call.toolName !== "string" || !isVelesdbRecallToolName(call.toolName)) return "";
  const verdict = classifyRecall(call.toolName, call.toolInput, call.toolResponse, call.form);
  noteStat("recall", verdict.successful ? "ok" : "failed");
  if (!verdict.successful) return `recall not counted: ${verdict.why}${noteMemoryDown(input, call.toolResponse)}`;
  const sessionId = input.sessionId;
  if (sessionId === undefined) return `recall not recorded: the payload has no ${input.host.sessionIdField}`;
  const store = input.state();
  if (!store.safe) return `recall not recorded: ${store.cause}: ${store.problem}`;

  const pending = listRecords(store, input.kind(PENDING_RECALL), sessionId);
  if (pending.state !== "ok")
    return `recall not recorded: ${pending.state}: ${pending.path} ${pending.problem}; left for inspection`;
  const cwdIdentity = resolveProjectIdentity(input.cwd);

  if (pending.records.length > 0) {
    const chosen = choosePendingRoot(
      pending.records,
      verdict.scope,
      cwdIdentity.enforceLearningLoop ? cwdIdentity.root : "",
      cwdIdentity.root === "",
    );
    if (chosen !== undefined) {
      // Consume first, mark second: if a record cannot be removed, nothing is marked and the
      // queue stays as it is for inspection (docs/contract.md §6.2 point 3).
      for (const stored of pending.records) {
        if (stored.record.root === chosen && !removeRecordFile(stored.file)) {
          return `recall not recorded: storage: pending record ${stored.file} cannot be removed; left for inspection`;
        }
      }
      return markRecall(input, store, sessionId, chosen);
    }
  }
  if (!cwdIdentity.enforceLearningLoop) return "";
  if (verdict.scope.present && verdict.scope.project !== cwdIdentity.project) return "";
  return markRecall(input, store, sessionId, cwdIdentity.root);
}

/**
 * choosePendingRoot(records, scope, optedInCwdRoot, cwdUnconfigured) → the one root to promote.
 * An explicit project scope picks that project's pending repository (two roots with that
 * project name: ambiguous, none); else an opted-in cwd picks its own; else an unconfigured
 * cwd picks the only pending repository, if there is exactly one.
 */
export function choosePendingRoot(
  records: readonly StoredRecord[],
  scope: RecallScope,
  optedInCwdRoot: string,
  cwdUnconfigured: boolean,
): string | undefined {
  const roots = (list: readonly StoredRecord[]) => [...new Set(list.map((r) => r.record.root))];
  if (scope.present) {
    if (scope.project === undefined) return undefined;
    const matching = roots(records.filter((r) => r.record.project === scope.project));
    return matching.length === 1 ? matching[0] : undefined;
  }
  if (optedInCwdRoot !== "") return records.some((r) => r.record.root === optedInCwdRoot) ? optedInCwdRoot : undefined;
  if (cwdUnconfigured) {
    const all = roots(records);
    return all.length === 1 ? all[0] : undefined;
  }
  return undefined;
}

/** noteMemoryDown(input, response) → "" or "; …" after a recall that failed in transport: the session's memory-down marker (src/core/memory-down.ts). */
function noteMemoryDown(input: HookInput, response: unknown): string {
  const cause = transportFailureOf(response);
  const sessionId = input.sessionId;
  if (cause === undefined || sessionId === undefined) return "";
  const store = input.state();
  if (!store.safe) return "";
  const problem = recordMemoryDown(input, store, sessionId, cause);
  return problem ? `; ${problem}` : "; velesdb-memory did not answer (transport)";
}

function markRecall(input: HookInput, store: StateStore & { safe: true }, sessionId: string, root: string): string {
  const written = writePrivateFile(markerPath(store, input.kind(RECALL), repositoryIdentity(sessionId, root)), "1\n");
  return written.ok ? "" : `recall not recorded: ${written.cause}: ${written.problem}`;
}
