// The recall-before-edit guard (docs/contract.md §6.1). In a repository that opted in, the first edit of a
// host session is refused until that session ran a successful velesdb-memory recall bound to
// that repository. Fail-closed, but only where the user asked for it: a repository without
// `"enforce_learning_loop": true` is never gated, so a user-wide install never blocks an
// unrelated project. Policy comes from the bytes an edit touches (the target, resolved
// physically), never from where the agent happens to stand.
import * as fs from "node:fs";
import * as path from "node:path";
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity, type ProjectIdentity } from "./identity.ts";
import { addRecord, LEARNING_DIRTY, PENDING_RECALL, RECALL, type RepositoryRecord } from "./records.ts";
import { markerPath, readPrivateFile, repositoryIdentity, type StateStore } from "./state.ts";
import { memoryDownCause, toldOnce } from "./memory-down.ts";
import { noteStat } from "./stats-note.ts";
import { guardRefusal, memoryDownPassNote, type GuardProblem } from "./texts.ts";

interface GuardedTarget {
  /** The path as the model will see it in the refusal. */
  readonly target: string;
  readonly repository: RepositoryRecord;
}

/**
 * guardEditDecision(input, ["/repo/a.ts", "rel/b.ts"]) → pass, or deny naming every problem.
 * An empty list means the tool documents no target (the DeepSeek bridge sends none): the
 * session cwd decides. A multi-target patch passes only when every opted-in target passes,
 * and only then is anything marked dirty, so a refused patch leaves no checkpoint behind.
 */
export function guardEditDecision(input: HookInput, rawTargets: readonly string[]): Decision {
  const problems: GuardProblem[] = [];
  const guarded = new Map<string, GuardedTarget>();
  const starts =
    rawTargets.length > 0
      ? rawTargets.map((t) => editStart(input.cwd, t))
      : [{ target: input.cwd, startDir: input.cwd, link: false }];

  for (const start of starts) {
    if (start.link) {
      const crossing = symlinkCrossing(start.target);
      if (crossing) problems.push(crossing);
      continue;
    }
    const identity = resolveProjectIdentity(start.startDir);
    if (!identity.enforceLearningLoop) continue;
    if (!guarded.has(identity.root))
      guarded.set(identity.root, { target: start.target, repository: recordOf(identity) });
  }
  if (guarded.size === 0) return problems.length > 0 ? deny(problems, input) : pass(input.inputProblem);

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

interface EditStart {
  readonly target: string;
  readonly startDir: string;
  /** The final component is a symlink. */
  readonly link: boolean;
}

function editStart(cwd: string, raw: string): EditStart {
  const target = path.resolve(cwd, raw);
  let link = false;
  try {
    link = fs.lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    // Missing (a new file) or unreadable: its directory decides.
  }
  return { target, startDir: path.dirname(target), link };
}

/**
 * symlinkCrossing("/repo/link") → a problem when the link's directory or its resolved target's
 * directory is opted in. Canonicalising only the parent would let a link inside an unguarded
 * directory write into a guarded repository; a recall for one side cannot vouch for the other.
 */
function symlinkCrossing(target: string): GuardProblem | undefined {
  const resolved = resolveFinalSymlink(target);
  const linkSideGuarded = resolveProjectIdentity(path.dirname(target)).enforceLearningLoop;
  const targetSideGuarded =
    resolved !== undefined && resolveProjectIdentity(path.dirname(resolved)).enforceLearningLoop;
  if (!linkSideGuarded && !targetSideGuarded) return undefined;
  return { cause: "symlink", target, resolved: resolved ?? "(a link that does not resolve)" };
}

/** resolveFinalSymlink("/a/link") → the path after following final-component links (≤ 40 hops). */
function resolveFinalSymlink(linkPath: string): string | undefined {
  let current = linkPath;
  for (let hops = 0; hops < 40; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(current);
    } catch {
      return current; // A dangling link's final target: a file the edit would create.
    }
    if (!st.isSymbolicLink()) return current;
    try {
      current = path.resolve(path.dirname(current), fs.readlinkSync(current));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function recordOf(identity: ProjectIdentity): RepositoryRecord {
  return { project: identity.project, session: identity.session, root: identity.root };
}

function slotOf(item: GuardedTarget) {
  return { project: item.repository.project, session: item.repository.session, root: item.repository.root };
}

function deny(problems: readonly GuardProblem[], input: HookInput): Decision {
  const causes = [...new Set(problems.map((p) => p.cause))].join(", ");
  noteStat("guard", "refused");
  return { kind: "deny", reason: guardRefusal(problems, input.host.mcpTool), note: `edit refused (${causes})` };
}
