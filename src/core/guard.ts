// The recall-before-edit guard (docs/contract.md §6.1). In a repository that opted in, the first edit of a
// host session is refused until that session ran a successful velesdb-memory recall bound to
// that repository. Fail-closed, but only where the user asked for it: a repository without
// `"enforce_learning_loop": true` is never gated, so a user-wide install never blocks an
// unrelated project. Policy comes from the bytes an edit touches (the target, resolved
// physically), never from where the agent happens to stand.
import * as fs from "node:fs";
import * as path from "node:path";
import { pass, type Decision } from "./decision.ts";
import type { GuardedTarget } from "./guard-verdict.ts";
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity } from "./identity.ts";
import type { GuardProblem } from "./texts.ts";

/**
 * guardEditDecision(input, ["/repo/a.ts", "rel/b.ts"]) → pass, or deny naming every problem.
 * An empty list means the tool documents no target (the DeepSeek bridge sends none): the
 * session cwd decides. A multi-target patch passes only when every opted-in target passes,
 * and only then is anything marked dirty, so a refused patch leaves no checkpoint behind.
 *
 * This module finds which repositories an edit touches and whether they opted in; what
 * follows for those (the recall evidence, the refusal, the checkpoint queue) is
 * guard-verdict.ts, loaded only then. Most edits a user-wide install sees are outside an
 * opted-in repository, and that hook is held to the bench's tighter guard for a hook that
 * touches no state (docs/contract.md §12): it need not evaluate the verdict's modules (texts,
 * records, the memory-down rule). Measured, the saving is within the noise (0.985×, IQR
 * 0.94–1.04: docs/performance/2026-12-02-bench-guard.md); the split stands because the logic
 * divides here.
 */
export async function guardEditDecision(input: HookInput, rawTargets: readonly string[]): Promise<Decision> {
  const problems: GuardProblem[] = [];
  const guarded = new Map<string, GuardedTarget>();
  // A loop, not map: the edit outside an opted-in repository is a hook held to 1.15× the floor,
  // and an array builtin's first call costs ~0.1 M instructions (docs/performance/2026-12-02-bench-guard.md).
  const starts = [];
  for (const t of rawTargets) starts.push(editStart(input.cwd, t));
  if (starts.length === 0) starts.push({ target: input.cwd, startDir: input.cwd, link: false });

  for (const start of starts) {
    if (start.link) {
      const crossing = symlinkCrossing(start.target);
      if (crossing) problems.push(crossing);
      continue;
    }
    const identity = resolveProjectIdentity(start.startDir);
    if (!identity.enforceLearningLoop) continue;
    if (!guarded.has(identity.root))
      guarded.set(identity.root, {
        target: start.target,
        repository: { project: identity.project, session: identity.session, root: identity.root },
      });
  }
  if (guarded.size === 0 && problems.length === 0) return pass(input.inputProblem);
  return (await import("./guard-verdict.ts")).guardedEditVerdict(input, guarded, problems);
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
