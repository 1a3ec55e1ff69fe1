// The guard's verdict for an edit that touches an opted-in repository, or whose link crosses
// into one (docs/contract.md §6.1): each repository needs this session's successful recall
// bound to it; when every one has it, each is queued for the next Stop checkpoint. Loaded by
// src/core/guard.ts only for such edits (its header says why the two are apart).
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { addRecord, LEARNING_DIRTY, PENDING_RECALL, RECALL, type RepositoryRecord } from "./records.ts";
import { markerPath, readPrivateFile, repositoryIdentity, type StateStore } from "./state.ts";
import { memoryDownCause, toldOnce } from "./memory-down.ts";
import { noteStat } from "./stats-note.ts";
import { guardRefusal, memoryDownPassNote, type GuardProblem } from "./texts.ts";

export interface GuardedTarget {
  /** The path as the model will see it in the refusal. */
  readonly target: string;
  readonly repository: RepositoryRecord;
}

/**
 * guardedEditVerdict(input, guarded, problems) → pass, or deny naming every problem: `guarded`
 * holds one target per opted-in repository the edit touches, `problems` the link crossings
 * already found.
 */
export function guardedEditVerdict(
  input: HookInput,
  guarded: ReadonlyMap<string, GuardedTarget>,
  found: readonly GuardProblem[],
): Decision {
  const problems = [...found];
  if (guarded.size === 0) return deny(problems, input);

  const sessionId = input.sessionId;
  const store = input.state();
  const unlocked: GuardedTarget[] = [];
  const downNotes: string[] = [];
  for (const item of guarded.values()) {
    const problem = checkRecallEvidence(input, store, sessionId, item, downNotes);
    if (problem) problems.push(problem);
    else unlocked.push(item);
  }
  if (problems.length > 0) return deny(problems, input);
  const passed = downNotes.length > 0 ? passedWhileDown(input, downNotes) : pass(input.inputProblem);
  noteStat("guard", "allowed");

  // Every target is unlocked: queue each repository for the next Stop checkpoint. One file per
  // repository, so concurrent edits never lose each other; if one cannot be written the edit
  // is refused, since an edit the checkpoint would never hear of defeats the loop.
  if (!input.host.checkpointsEdits) return passed;
  for (const item of unlocked) {
    const written = addRecord(
      store as StateStore & { safe: true },
      input.kind(LEARNING_DIRTY),
      sessionId!,
      item.repository,
    );
    if (!written.ok)
      problems.push({
        cause: written.cause,
        target: item.target,
        path: written.path,
        problem: written.problem,
        repository: slotOf(item),
      });
  }
  return problems.length > 0 ? deny(problems, input) : passed;
}

/** An edit let through without a recall because velesdb-memory is down: said to the user (and on stderr), every time. */
function passedWhileDown(input: HookInput, causes: readonly string[]): Decision {
  const line = memoryDownPassNote([...new Set(causes)].join("; "));
  return { kind: "pass", note: input.inputProblem ? `${input.inputProblem}; ${line}` : line, userMessage: line };
}

function checkRecallEvidence(
  input: HookInput,
  store: StateStore,
  sessionId: string | undefined,
  item: GuardedTarget,
  downNotes: string[],
): GuardProblem | undefined {
  const repository = slotOf(item);
  if (sessionId === undefined) return { cause: "session", target: item.target, repository };
  if (!store.safe)
    return {
      cause: store.cause,
      target: item.target,
      path: store.dir,
      problem: store.problem.replace(`state directory ${store.dir} `, ""),
      repository,
    };
  const marker = markerPath(store, input.kind(RECALL), repositoryIdentity(sessionId, item.repository.root));
  const evidence = readPrivateFile(marker);
  if (evidence.state === "present") return undefined;
  if (evidence.state !== "absent")
    return { cause: evidence.state, target: item.target, path: evidence.path, problem: evidence.problem, repository };
  // No recall yet: remember the repository, so the recall that follows can be bound to it even
  // when it runs from another cwd (docs/contract.md §6.2 promotion).
  const pending = addRecord(store, input.kind(PENDING_RECALL), sessionId, item.repository);
  if (!pending.ok)
    return { cause: pending.cause, target: item.target, path: pending.path, problem: pending.problem, repository };
  // velesdb-memory known down (docs/shared-memory.md "A dead server"): the model is told so
  // once, naming the cause and doctor; after that, edits pass with a note while it stays down,
  // since no recall can succeed and refusing forever would lock the user out of the session.
  const down = memoryDownCause(input, store, sessionId);
  if (down !== undefined) {
    if (toldOnce(input, store, sessionId, item.repository.root)) {
      downNotes.push(down);
      return undefined;
    }
    return { cause: "memory-down", target: item.target, repository, why: down };
  }
  return { cause: "recall", target: item.target, repository };
}

function slotOf(item: GuardedTarget) {
  return { project: item.repository.project, session: item.repository.session, root: item.repository.root };
}

function deny(problems: readonly GuardProblem[], input: HookInput): Decision {
  const causes = [...new Set(problems.map((p) => p.cause))].join(", ");
  noteStat("guard", "refused");
  return { kind: "deny", reason: guardRefusal(problems, input.host.mcpTool), note: `edit refused (${causes})` };
}
