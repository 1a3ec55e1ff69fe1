// What one hook call did, noted by the rules as they decide, for the one stats record the entry
// appends when the answer is written (src/core/stats-record.ts, docs/stats.md). Only counts,
// names and durations are kept here: never a payload, a command line or output text, so a note
// can never carry what the user's tools printed. Each rule notes its outcome in one line where
// only it knows it (the guard's refusal, a recall's verdict, a checkpoint asked, a compression's
// result); everything else (host, event, the decision's kind) the entry notes itself.
// No imports: this module is evaluated by every hook, and must cost nothing but its object.
import type { Decision } from "./decision.ts";

/** The facts of one hook call; every field is optional and absent means "did not happen". */
export interface HookFacts {
  host?: string;
  event?: string;
  /** The host session id, kept in memory only: the record holds its cksum. */
  session?: string;
  /** The kind of the decision answered (pass, deny, continue, …). */
  decision?: string;
  /** The project of the first identity a rule resolved (src/core/identity.ts). */
  project?: string;
  /** The rule threw and the event's failure policy answered instead. */
  error?: boolean;
  /** A watchdog deadline expired during this call (src/core/watchdog.ts). */
  timeout?: boolean;
  /** The answer's stdout could not be written whole. */
  answerLost?: boolean;
  guard?: "refused" | "allowed";
  recall?: "ok" | "failed";
  /** A Stop owed a learning checkpoint ("asked"), and answered with it ("sent"). */
  checkpoint?: "asked" | "sent";
  compression?: CompressionFacts;
}

export interface CompressionFacts {
  readonly outcome: "replaced" | "passed";
  /** Why a pass passed: a short fixed name (src/core/stats-record.ts, compressionReason). */
  readonly reason?: string;
  /** Bytes the model would have read, and bytes it reads instead (replaced only). */
  readonly bytesIn?: number;
  readonly bytesOut?: number;
  readonly tokensSaved?: number;
}

const facts: HookFacts = {};

/** noteStat("guard", "refused"): one fact of this hook call; a later note of the same key wins. */
export function noteStat<K extends keyof HookFacts>(key: K, value: HookFacts[K]): void {
  facts[key] = value;
}

/** notedFacts() → everything noted so far in this process (one process is one hook call). */
export function notedFacts(): Readonly<HookFacts> {
  return facts;
}

/** noteHook("claude", "PreToolUse", "abc"): which hook this call is, noted by the entry. */
export function noteHook(host: string, event: string, session: string | undefined): void {
  facts.host = host;
  facts.event = event;
  if (session !== undefined) facts.session = session;
}

/** noteProject(identity) → identity, its project noted when it is the first one resolved. */
export function noteProject<T extends { readonly project: string }>(identity: T): T {
  if (facts.project === undefined) facts.project = identity.project;
  return identity;
}

/** noteDecision(decision, error?) → decision, its kind noted (and that the rule threw, when it did). */
export function noteDecision(decision: Decision, error?: "error"): Decision {
  facts.decision = decision.kind;
  if (error) facts.error = true;
  return decision;
}

/**
 * noteCompression(input, decision) → decision, with what the compression gates and compressor
 * made of one shell output noted: replaced (compress.ts noted the sizes), or passed and why,
 * named from a fixed list. The reason is read from the pass's note, which is ours (compress.ts,
 * compress-gates.ts, compiler.ts), and only a name is kept: a note may hold a path.
 */
export function noteCompression(input: { readonly payload: Record<string, unknown>; readonly env: NodeJS.ProcessEnv }, decision: Decision): Decision {
  if (decision.kind === "replaceOutput") facts.compression ??= { outcome: "replaced" };
  else if (decision.note) facts.compression = { outcome: "passed", reason: notedPassReason(decision.note) };
  else {
    // A pass without a note is one of the quiet gates (compress-gates.ts): not on the
    // allowlist, an image, or below the size threshold, the common case.
    const allowlist = input.env.VELESDB_HOOK_COMPRESS_TOOLS;
    const response = input.payload.tool_response as Record<string, unknown> | null | undefined;
    const reason =
      input.payload.tool_name !== "Bash" || (allowlist !== undefined && !allowlist.split(/[\s,]+/).includes("Bash"))
        ? "not-allowlisted"
        : typeof response === "object" && response?.isImage === true
          ? "image"
          : "below-threshold";
    facts.compression = { outcome: "passed", reason };
  }
  return decision;
}

/**
 * notedPassReason("compression refused: fidelity risk high …") → "fidelity-risk". The table is
 * built only when a pass has a note: regular expressions made at module evaluation cost every
 * hook their heap, and the commonest hooks sit just under the engine's warm-up threshold
 * (docs/performance/2026-12-02-io-floor.md, "The warm-up thread, counted").
 */
function notedPassReason(note: string): string {
  const reasons: ReadonlyArray<readonly [RegExp, string]> = [
    [/compression off: state unavailable/, "state-unavailable"],
    [/compression off: /, "no-compiler"],
    [/VELESDB_HOOK_\w+=.* compression is off/, "bad-setting"],
    [/compression refused: fidelity risk/, "fidelity-risk"],
    [/compression refused: saving/, "too-little-gain"],
    [/compression refused: no time left/, "deadline"],
    [/compression refused: the compilation is empty/, "empty-compilation"],
    [/compression refused: the original cannot be archived|compression refused: archive/, "archive-failed"],
    [/compression refused: (the tool_response nests|the tool_response cannot be serialised)/, "shape"],
    [/compression refused: /, "compiler-failed"],
    [/tool_response|persistedOutputPath|persisted output|saved output/, "shape"],
  ];
  for (const [pattern, reason] of reasons) if (pattern.test(note)) return reason;
  return "other";
}

/** resetNotedFacts(): for unit tests, which run many calls in one process. */
export function resetNotedFacts(): void {
  for (const key of Object.keys(facts)) delete facts[key as keyof HookFacts];
}
