// The one model-facing sentence kept out of texts.ts: Codex's and Gemini's encoders fill an empty
// deny reason with it, and importing texts.ts for that put its whole chunk (every text of every
// event) into each of their hooks, a small Bash result's pass-through included
// (docs/performance/2026-12-02-io-floor.md: Codex
// 10.8 -> 10.0 ms of CPU, and below the heap size at which the engine starts a warm-up thread).
// texts.ts re-exports it; the sentence test reads both files as the texts' home.

/** The deny reason when a rule gave none: Codex ignores a deny whose reason is empty. */
export function fallbackRefusal(): string {
  return "velesdb-hooks refused this edit.";
}
