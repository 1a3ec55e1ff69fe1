// What one hook call did, noted by the rules as they decide, for the one stats record the entry
// appends when the answer is written (src/core/stats-record.ts, docs/stats.md). Only counts,
// names and durations are kept here: never a payload, a command line or output text, so a note
// can never carry what the user's tools printed. Each rule notes its outcome in one line where
// only it knows it (the guard's refusal, a recall's verdict, a checkpoint asked, a compression's
// result); everything else (host, event, the decision's kind) the entry notes itself.
// No imports but a type: this module is evaluated by every hook, and costs it one object.
import type { Decision } from "./decision.ts";

/**
 * The record as stored, one line of JSON (src/core/stats-record.ts). Short keys: a line is
 * 100–250 bytes. Every field but v, t, h, e and ms is absent when it did not happen.
 */
export interface StatsRecord {
  readonly v: 1;
  /** Seconds since the epoch, when the answer was written. */
  readonly t: number;
  /** Host and event (its wire name). */
  readonly h: string;
  readonly e: string;
  /** The hook's own time in ms: from process start to the answer written. */
  readonly ms: number;
  /** The kind of the decision answered (pass, deny, continue, addContext, …). */
  readonly d?: string;
  /** The project of the first identity a rule resolved (src/core/identity.ts), cut at 120 characters. */
  readonly p?: string;
  /** sessionKey of the host session id; the id itself is never kept. */
  readonly s?: string;
  /** The rule threw and the event's failure policy answered instead. */
  readonly err?: 1;
  /** A watchdog deadline expired during this call (src/core/watchdog.ts). */
  readonly to?: 1;
  /** The answer's stdout could not be written whole. */
  readonly lost?: 1;
  readonly g?: "refused" | "allowed";
  readonly r?: "ok" | "failed";
  /** A Stop owed a learning checkpoint ("asked"), and answered with it ("sent"). */
  readonly ck?: "asked" | "sent";
  /** Compression: replaced or passed, why it passed, bytes before and after, tokens saved. */
  readonly c?: "replaced" | "passed";
  readonly why?: string;
  readonly bi?: number;
  readonly bo?: number;
  readonly tk?: number;
}

/** The notes a rule can make, by name (noteStat). */
export interface Notes {
  guard: "refused" | "allowed";
  recall: "ok" | "failed";
  checkpoint: "asked" | "sent";
  timeout: true;
  answerLost: true;
  compression: {
    readonly outcome: "replaced" | "passed";
    readonly bytesIn?: number;
    readonly bytesOut?: number;
    readonly tokensSaved?: number;
  };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * This process's record (one process is one hook call), filled in as the rules decide and
 * written as it is: kept in its stored shape so that writing it is one JSON.stringify. The
 * first call of a function costs the engine its linking, ~0.1 ms for one that builds a
 * 19-field object (measured, compiled binary), on a hook of ~9 ms.
 */
export const noted: Mutable<Partial<StatsRecord>> & { v: 1; t: number; h: string; e: string; ms: number } = {
  v: 1,
  t: 0,
  h: "unknown",
  e: "unknown",
  ms: 0,
};

const MAX_PROJECT_CHARS = 120;

/** noteStat("guard", "refused"): one fact of this hook call; a later note of the same name wins. */
export function noteStat<K extends keyof Notes>(name: K, value: Notes[K]): void {
  if (name === "guard") noted.g = value as Notes["guard"];
  else if (name === "recall") noted.r = value as Notes["recall"];
  else if (name === "checkpoint") noted.ck = value as Notes["checkpoint"];
  else if (name === "timeout") noted.to = 1;
  else if (name === "answerLost") noted.lost = 1;
  else {
    const c = value as Notes["compression"];
    noted.c = c.outcome;
    noted.bi = c.bytesIn;
    noted.bo = c.bytesOut;
    noted.tk = c.tokensSaved;
  }
}

/**
 * sessionKey("696533f4-…") → "1x2f9qk": the session id's 32-bit FNV-1a in base 36. Enough to
 * follow one session's records; the id itself is never written.
 */
export function sessionKey(session: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < session.length; i++) hash = Math.imul(hash ^ session.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

/** noteHook("claude", "PreToolUse", "abc"): which hook this call is, noted by the entry. */
export function noteHook(host: string, event: string, session: string | undefined): void {
  noted.h = host;
  noted.e = event;
  if (session !== undefined) noted.s = sessionKey(session);
}

/** noteProject(identity) → identity, its project noted when it is the first one resolved. */
export function noteProject<T extends { readonly project: string }>(identity: T): T {
  if (noted.p === undefined) noted.p = identity.project.slice(0, MAX_PROJECT_CHARS);
  return identity;
}

/** noteDecision(decision, error?) → decision, its kind noted (and that the rule threw, when it did). */
export function noteDecision(decision: Decision, error?: "error"): Decision {
  noted.d = decision.kind;
  if (error) noted.err = 1;
  return decision;
}

/**
 * noteCompression(env, "Bash", compression) → compression, with what became of one command
 * output noted: replaced (compress.ts noted the sizes and the saving), or passed and why, named
 * from a fixed list. The reason is read from the pass's note, which is ours (compress.ts,
 * compress-gates.ts, compiler.ts), and only a name is kept: a note may hold a path.
 */
export function noteCompression<
  C extends { readonly kind: "compiled" } | { readonly kind: "untouched"; readonly decision: Decision },
>(env: NodeJS.ProcessEnv, toolName: string, compression: C): C {
  if (compression.kind === "compiled") {
    noted.c ??= "replaced";
    return compression;
  }
  const note = (compression as { readonly decision: Decision }).decision.note;
  noted.c = "passed";
  noted.bi = noted.bo = noted.tk = undefined;
  // A pass without a note is one of the quiet gates (compress-gates.ts): not on the allowlist,
  // or below the size threshold, the common case.
  const allowlist = env.VELESDB_HOOK_COMPRESS_TOOLS;
  noted.why = note
    ? notedPassReason(note)
    : toolName !== "Bash" || (allowlist !== undefined && !allowlist.split(/[\s,]+/).includes("Bash"))
      ? "not-allowlisted"
      : "below-threshold";
  return compression;
}

/**
 * notedPassReason("compression refused: saving 40 tokens …") → "too-little-gain". The table is
 * built only when a pass has a note: regular expressions made at module evaluation cost every
 * hook their heap, and the commonest hooks sit just under the engine's warm-up threshold
 * (docs/performance/2026-12-02-io-floor.md, "The warm-up thread, counted").
 */
function notedPassReason(note: string): string {
  const reasons: ReadonlyArray<readonly [RegExp, string]> = [
    [/compression off: state unavailable/, "state-unavailable"],
    [/compression off: /, "no-compiler"],
    [/VELESDB_HOOK_\w+=.* compression is off/, "bad-setting"],
    [/compression refused: no time left/, "deadline"],
    [/compression refused: saving/, "too-little-gain"],
    [/compression refused: the compilation is empty/, "empty-compilation"],
    [/compression refused: .*(signal lines|fidelity risk)/, "signal-lost"],
    [/compression refused: (the original cannot be archived|archive|no free archive)/, "archive-failed"],
    [/compression refused: (the tool result nests|.*cannot be serialised)/, "shape"],
    [/compression refused: /, "compiler-failed"],
    [/saved output|persisted output|tool_response|tool result/, "shape"],
  ];
  for (const [pattern, reason] of reasons) if (pattern.test(note)) return reason;
  return "other";
}

/** resetNoted(): for unit tests, which run many calls in one process. */
export function resetNoted(): void {
  for (const key of Object.keys(noted))
    if (!["v", "t", "h", "e", "ms"].includes(key)) delete noted[key as keyof typeof noted];
  Object.assign(noted, { t: 0, h: "unknown", e: "unknown", ms: 0 });
}
