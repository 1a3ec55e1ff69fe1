// Stop with the learning loop (docs/contract.md §6.5): every batch of edits in opted-in repositories earns
// exactly one checkpoint continuation that names each repository, and a Stop with nothing new
// passes — so a session is reminded once per batch and can always end. The batch is first
// snapshotted into a manifest ("pending"), then delivered: if a Stop dies between consuming
// the dirty records and answering, the next Stop re-sends the same batch instead of losing it.
// Two Stops of one session at once each delivered the same batch (docs/decisions.md#the-learning-loop): the whole
// hand-off now runs under one claim per session (claim.ts: a file linked into place, so only
// one Stop takes it), and a Stop that finds it taken by a live Stop leaves the batch to that
// one. A claim left by a Stop that died is stale and taken over, and its batch, still
// "pending", is re-sent by the recovery below: crash-safe as before.
import * as path from "node:path";
import { tryClaim } from "./claim.ts";
import type { Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity, type ProjectIdentity } from "./identity.ts";
import { genericStopDecision, memorySlot, sessionOf, stopOnStateFailure } from "./lifecycle.ts";
import { isPlainObject, parseJsonObject } from "./payload.ts";
import {
  canonicalRecordJson,
  LEARNING_DIRTY,
  listRecords,
  recordFromObject,
  removeRecordFile,
  type RepositoryRecord,
} from "./records.ts";
import {
  markerPath,
  readPrivateFile,
  recordsPath,
  repositoryIdentity,
  writePrivateFile,
  type StateStore,
} from "./state.ts";
import type { SavedByHook } from "./session-memory.ts";
import { noteStat } from "./stats-note.ts";
import { checkpointStateNotice, learningCheckpoint, stuckQueueWarning, type StateFailure } from "./texts.ts";

export const CHECKPOINT_MANIFEST = "learning-checkpoint-manifest";
/** The per-session claim a Stop holds while it hands a batch over. */
export const CHECKPOINT_CLAIM = "learning-checkpoint-claim";
const STOP = "stop";

interface Manifest {
  readonly state: "pending" | "delivered";
  readonly targets: readonly RepositoryRecord[];
  /**
   * Dirty record files this batch covered but could not remove. Carried forward so those
   * records are never taken for a new batch: an undeletable record would otherwise earn a
   * checkpoint at every Stop, and Codex has no continuation cap.
   */
  readonly stuck?: readonly string[];
}

/**
 * stopDecision(input, byHook) → the checkpoint, the generic save reminder, or a pass
 * (docs/contract.md §5.2 + §6.5). `byHook`: what the hook's own save from the transcript found
 * (src/hosts/host.ts STOP_EVENT): once the model has saved, no reminder is sent.
 */
export function stopDecision(input: HookInput, byHook: SavedByHook = { modelSaved: false }): Decision {
  const identity = resolveProjectIdentity(input.cwd);
  const store = input.state();
  if (!store.safe)
    return stopOnStateFailure(input, identity, {
      access: "use",
      cause: store.cause,
      path: store.dir,
      problem: store.problem,
      stateDir: store.dir,
    });
  const sessionId = sessionOf(input);
  const claimFile = markerPath(store, input.kind(CHECKPOINT_CLAIM), sessionId);
  const claim = tryClaim(claimFile);
  // Another Stop of this session is handing over right now: the batch is its to deliver (and
  // what is queued after its listing stays for the next Stop). This one is a Stop with nothing new.
  if (claim.state === "held") return genericStopDecision(input, identity, byHook);
  if (claim.state === "failed")
    return stateFailure(input, identity, store.dir, "write", "storage", claimFile, `cannot be created (${claim.code})`);
  try {
    return handOver(input, identity, store, sessionId, byHook);
  } finally {
    claim.release();
  }
}

/** handOver(…) → recovery, a new batch, the once-per-repository checklist, or the generic reminder; run under the session's claim. */
function handOver(
  input: HookInput,
  identity: ProjectIdentity,
  store: StateStore & { safe: true },
  sessionId: string,
  byHook: SavedByHook,
): Decision {
  const manifestFile = markerPath(store, input.kind(CHECKPOINT_MANIFEST), sessionId);

  // 1. Recovery: a batch captured by an earlier Stop that may never have reached the model.
  const manifestRead = readPrivateFile(manifestFile);
  if (manifestRead.state === "linked" || manifestRead.state === "malformed") {
    return stateFailure(input, identity, store.dir, "read", manifestRead.state, manifestFile, manifestRead.problem);
  }
  const dirtyDir = recordsPath(store, input.kind(LEARNING_DIRTY), sessionId);
  let knownStuck: string[] = [];
  if (manifestRead.state === "present") {
    const manifest = parseManifest(manifestRead.content);
    if (!manifest)
      return stateFailure(
        input,
        identity,
        store.dir,
        "read",
        "malformed",
        manifestFile,
        "is not a checkpoint manifest",
      );
    if (manifest.state === "pending") {
      // The interrupted Stop may have died before emptying the queue: the records this
      // snapshot already covers go now, or the batch would earn a second checkpoint.
      const covered = new Set(manifest.targets.map(canonicalRecordJson));
      const queued = listRecords(store, input.kind(LEARNING_DIRTY), sessionId);
      const leftover =
        queued.state === "ok" ? queued.records.filter((r) => covered.has(canonicalRecordJson(r.record))) : [];
      const stuck = leftover.filter((r) => !removeRecordFile(r.file)).map((r) => path.basename(r.file));
      return deliver(
        input,
        identity,
        store.dir,
        manifestFile,
        manifest.targets,
        [...(manifest.stuck ?? []), ...stuck],
        "",
      );
    }
    knownStuck = (manifest.stuck ?? []).filter((name) => !removeRecordFile(path.join(dirtyDir, name)));
    const consumed =
      knownStuck.length === 0
        ? removeRecordFile(manifestFile)
        : writePrivateFile(
            manifestFile,
            manifestJson({ state: "delivered", targets: manifest.targets, stuck: knownStuck }),
          ).ok;
    if (!consumed)
      return stateFailure(input, identity, store.dir, "write", "storage", manifestFile, "cannot be updated");
  }

  // 2. A new batch: every repository edited since the last checkpoint.
  const dirty = listRecords(store, input.kind(LEARNING_DIRTY), sessionId);
  if (dirty.state !== "ok")
    return stateFailure(input, identity, store.dir, "read", dirty.state, dirty.path, dirty.problem);
  const fresh = dirty.records.filter((r) => !knownStuck.includes(path.basename(r.file)));
  if (fresh.length > 0) {
    const targets = uniqueTargets(fresh.map((r) => r.record));
    const snapshot = writePrivateFile(manifestFile, manifestJson({ state: "pending", targets, stuck: knownStuck }));
    if (!snapshot.ok)
      return stateFailure(input, identity, store.dir, "write", snapshot.cause, manifestFile, snapshot.problem);
    for (const target of targets)
      writePrivateFile(markerPath(store, input.kind(STOP), repositoryIdentity(sessionId, target.root)), "1\n");
    writePrivateFile(markerPath(store, input.kind(STOP), sessionId), "1\n");
    const stuck = fresh.filter((r) => !removeRecordFile(r.file)).map((r) => path.basename(r.file));
    const warning = stuck.length > 0 ? stuckQueueWarning(dirty.dir, stuck.length) : "";
    return deliver(input, identity, store.dir, manifestFile, targets, [...knownStuck, ...stuck], warning);
  }
  if (knownStuck.length > 0) {
    return stateFailure(
      input,
      identity,
      store.dir,
      "write",
      "storage",
      dirtyDir,
      `holds ${knownStuck.length} record(s) that cannot be removed`,
    );
  }

  // 3. No edits: an opted-in repository still gets its checklist once per session.
  if (identity.enforceLearningLoop) {
    const repoMarker = markerPath(store, input.kind(STOP), repositoryIdentity(sessionId, identity.root));
    const seen = readPrivateFile(repoMarker);
    if (seen.state === "linked" || seen.state === "malformed")
      return stateFailure(input, identity, store.dir, "read", seen.state, seen.path, seen.problem);
    if (seen.state === "absent") {
      const written = writePrivateFile(repoMarker, "1\n");
      if (!written.ok)
        return stateFailure(input, identity, store.dir, "write", written.cause, repoMarker, written.problem);
      writePrivateFile(markerPath(store, input.kind(STOP), sessionId), "1\n");
      noteStat("checkpoint", "sent");
      return {
        kind: "continue",
        text: checkpointText(input, [{ project: identity.project, session: identity.session, root: identity.root }]),
        note: input.inputProblem,
      };
    }
  }
  return genericStopDecision(input, identity, byHook);
}

/** deliver(…) → the checklist continuation, after the manifest is marked delivered. */
function deliver(
  input: HookInput,
  identity: ProjectIdentity,
  stateDir: string,
  manifestFile: string,
  targets: readonly RepositoryRecord[],
  stuck: readonly string[],
  warning: string,
): Decision {
  noteStat("checkpoint", "asked");
  const delivered = writePrivateFile(manifestFile, manifestJson({ state: "delivered", targets, stuck }));
  if (!delivered.ok) {
    // Without "delivered" the next Stop would send this batch again, and again: the session
    // could only end through the host's flag.
    return stateFailure(input, identity, stateDir, "write", delivered.cause, manifestFile, delivered.problem);
  }
  noteStat("checkpoint", "sent");
  return {
    kind: "continue",
    text: checkpointText(input, targets, warning || undefined),
    note: warning || input.inputProblem,
  };
}

/** checkpointText → the checklist with each repository's save in this session's own slot, tools as the host names them. */
function checkpointText(
  input: HookInput,
  targets: readonly { readonly project: string; readonly session: string; readonly root: string }[],
  warning?: string,
): string {
  return learningCheckpoint(
    targets.map((t) => ({ ...memorySlot(input, t), root: t.root })),
    warning,
    input.host.mcpTool,
  );
}

function stateFailure(
  input: HookInput,
  identity: ProjectIdentity,
  stateDir: string,
  access: "read" | "write",
  cause: "linked" | "malformed" | "storage",
  path: string,
  problem: string,
): Decision {
  const failure: StateFailure = { access, cause, path, problem, stateDir };
  const decision = stopOnStateFailure(input, identity, failure);
  if (decision.kind !== "continue") return decision;
  return { ...decision, text: checkpointStateNotice(memorySlot(input, identity), failure) };
}

function manifestJson(manifest: Manifest): string {
  const targets = manifest.targets.map((t) => ({ project: t.project, session: t.session, root: t.root }));
  const stuck = manifest.stuck && manifest.stuck.length > 0 ? { stuck: manifest.stuck } : {};
  return `${JSON.stringify({ state: manifest.state, targets, ...stuck })}\n`;
}

function parseManifest(text: string): Manifest | undefined {
  const value = parseJsonObject(text);
  if (!value) return undefined;
  const { state, targets, stuck } = value;
  if ((state !== "pending" && state !== "delivered") || !Array.isArray(targets)) return undefined;
  const parsed = targets.map((t: unknown) => (isPlainObject(t) ? recordFromObject(t) : undefined));
  if (parsed.some((t) => t === undefined)) return undefined;
  if (
    stuck !== undefined &&
    !(Array.isArray(stuck) && stuck.every((n) => typeof n === "string" && /^\d+-\d+\.json$/.test(n)))
  )
    return undefined;
  return { state, targets: parsed as RepositoryRecord[], stuck: (stuck as string[] | undefined) ?? [] };
}

/** uniqueTargets(records) → each distinct record once, ordered by root so the manifest is stable. */
function uniqueTargets(records: readonly RepositoryRecord[]): RepositoryRecord[] {
  const distinct = new Map<string, RepositoryRecord>();
  for (const r of records) distinct.set(canonicalRecordJson(r), r);
  const key = (r: RepositoryRecord) => `${r.root}\u0000${r.project}\u0000${r.session}`;
  return [...distinct.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
