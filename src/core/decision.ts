// The neutral answer every rule returns. Rules never know how a host spells an answer;
// each host module turns one of these into its own bytes (src/hosts/*.ts), so a host that
// renames a field changes one encoder, not the rules.

/** A rule's verdict for one hook invocation. */
export type Decision =
  /**
   * The host's neutral answer: nothing changes. `userMessage`: one line for the user, where the
   * host has a channel the user sees and the model does not (Claude's systemMessage).
   */
  | { readonly kind: "pass"; readonly note?: string; readonly userMessage?: string }
  /** Context the model reads at session start (or after a prompt). */
  | { readonly kind: "addContext"; readonly text: string; readonly note?: string }
  /** Stop: the agent must take one more step; `text` is what the model reads. */
  | { readonly kind: "continue"; readonly text: string; readonly note?: string }
  /** A tool call (an edit) is refused; `reason` is what the model reads. */
  | { readonly kind: "deny"; readonly reason: string; readonly note?: string }
  /** PostToolUse: the tool result the model sees is replaced by `toolResponse`. */
  | { readonly kind: "replaceOutput"; readonly toolResponse: Record<string, unknown>; readonly note?: string }
  /** PreCompact: plain text appended to the summariser's instructions. */
  | { readonly kind: "summariserInstructions"; readonly text: string; readonly note?: string };

export type DecisionKind = Decision["kind"];

/**
 * What a host encoder produces and the entry writes, once: stdout bytes (possibly empty),
 * one stderr line (possibly empty) and the exit code.
 */
export interface HookAnswer {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: 0 | 1 | 2 | 64;
  /**
   * The answer to give instead when stdout could not be written completely (closed, full, a
   * reader gone). Set on a JSON deny: its exit-2 form, so a lost deny never becomes an allow.
   */
  readonly ifStdoutFails?: HookAnswer;
}

export const pass = (note?: string): Decision => (note ? { kind: "pass", note } : { kind: "pass" });

/**
 * joinNotes("a", undefined, "", "b") → "a; b": the notes that say something, in one line. A loop,
 * not filter and join: every PostToolUse joins its notes here, and an array builtin's first call
 * costs a hook ~0.1 M instructions (docs/performance/2026-12-02-bench-guard.md).
 */
export function joinNotes(...notes: ReadonlyArray<string | undefined>): string {
  let joined = "";
  for (const note of notes) if (note !== undefined && note !== "") joined = joined === "" ? note : `${joined}; ${note}`;
  return joined;
}

/** One diagnostic line on stderr, always with the same prefix so users can grep for it. */
export function diagnosticLine(note: string | undefined): string {
  if (!note) return "";
  const oneLine = note.replace(/[\r\n]+/g, " ").trim();
  return oneLine ? `velesdb-hooks: ${oneLine}\n` : "";
}

/** A JSON answer: one compact object, one trailing newline, nothing else (docs/contract.md §3.4). */
export function jsonAnswer(value: unknown, note?: string): HookAnswer {
  return { stdout: `${JSON.stringify(value)}\n`, stderr: diagnosticLine(note), exitCode: 0 };
}

/**
 * exitTwoDeny(reason) → the refusal every host honours without JSON: exit 2, the reason on
 * stderr (Claude, Codex, the DeepSeek bridge and Windsurf all block on it and show stderr).
 */
export function exitTwoDeny(reason: string): HookAnswer {
  return { stdout: "", stderr: `${reason}\n`, exitCode: 2 };
}

/** jsonDenyAnswer(value, reason, note) → the JSON deny, with exitTwoDeny(reason) should stdout fail. */
export function jsonDenyAnswer(value: unknown, reason: string, note?: string): HookAnswer {
  return { ...jsonAnswer(value, note), ifStdoutFails: exitTwoDeny(reason) };
}
