// Compression's entry and the gates that read nothing but what the host handed over and the
// environment (docs/contract.md §8): the allowlist, the nesting, the knobs and the size. They live apart from
// compress.ts so a host runs them before loading it: most command outputs are small, and their
// hook stops here without evaluating the compressor, the watchdog and the compiler client (docs/performance/2026-12-02-io-floor.md:
// a small result's hook went from 10.5 to 9.1 ms of CPU). The types both modules speak
// (CommandOutput, Compression, the settings) are compress.ts's: imported here as types only,
// which the bundle erases, so nothing of compress.ts loads before a gate lets an output through,
// and compress.ts imports nothing from here (test/import-graph.test.ts).
import { pass, type Decision } from "./decision.ts";
import type { CommandOutput, Compression, CompressionSettings } from "./compress.ts";
import type { HookInput } from "./hook-input.ts";
import { noteCompression } from "./stats-note.ts";

/** The numeric knobs of docs/contract.md §8 and their maxima; defaults are in readSettings. */
export const KNOBS = {
  minBytes: { name: "VELESDB_HOOK_MIN_BYTES", max: 1e9 },
  probeTimeout: { name: "VELESDB_HOOK_PROBE_TIMEOUT", max: 60 },
  budget: { name: "VELESDB_HOOK_TOKEN_BUDGET", max: 1e6 },
  budgetMax: { name: "VELESDB_HOOK_TOKEN_BUDGET_MAX", max: 1e6 },
  persistedBudget: { name: "VELESDB_HOOK_PERSISTED_BUDGET", max: 1e6 },
  minSaved: { name: "VELESDB_HOOK_MIN_SAVED_TOKENS", max: 1e6 },
} as const;

export type KnobName = keyof typeof KNOBS;

/**
 * parseKnob("2000", 1e6) → 2000; parseKnob("1+1", 1e6) → undefined. A small decimal integer:
 * digits only, at most 10 of them, above 0 and at most the knob's maximum. Nothing is ever
 * evaluated: `1+1`, `-5`, `0x10`, ` 5`, `1e3` and the empty string are all invalid.
 */
export function parseKnob(text: string, max: number): number | undefined {
  if (!/^[0-9]{1,10}$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 && value <= max ? value : undefined;
}

/** readSettings(env) → every knob (unset → its default), or the first invalid one, named with its value. */
export function readSettings(
  env: NodeJS.ProcessEnv,
): { ok: true; settings: CompressionSettings } | { ok: false; problem: string } {
  const problems: string[] = [];
  const knob = (key: KnobName, fallback: number): number => {
    const { name, max } = KNOBS[key];
    const raw = env[name];
    if (raw === undefined) return fallback;
    const value = parseKnob(raw, max);
    if (value !== undefined) return value;
    problems.push(
      `${name}=${JSON.stringify(raw.slice(0, 40))} is not a decimal integer from 1 to ${max}; compression is off for this call`,
    );
    return fallback;
  };
  const budget = knob("budget", 2000);
  const settings: CompressionSettings = {
    minBytes: knob("minBytes", 12_000),
    probeTimeoutMs: knob("probeTimeout", 10) * 1000,
    budget,
    budgetMax: knob("budgetMax", 2 * budget),
    persistedBudget: knob("persistedBudget", 1000),
    minSaved: knob("minSaved", 128),
  };
  return problems[0] === undefined ? { ok: true, settings } : { ok: false, problem: problems[0] };
}

/** compressibleTool(env, "Bash") → true when the allowlist names it and its shape is verified (Bash only). */
export function compressibleTool(env: NodeJS.ProcessEnv, toolName: string | undefined): boolean {
  if (toolName !== "Bash") return false;
  // Unset is the common case, and the default allowlist is Bash alone: no pattern to compile.
  const allowlist = env.VELESDB_HOOK_COMPRESS_TOOLS;
  return allowlist === undefined || allowlist.split(/[\s,]+/).includes("Bash");
}

export const untouched = (decision: Decision): Compression => ({ kind: "untouched", decision });

/**
 * compressCommandOutput(input, output) → the compiled view, or why the output stays as it is.
 * The gates that cost nothing run here (the allowlist, the nesting, the knobs, the size), so a
 * small output answers without loading the compressor (src/core/compress.ts), the watchdog and
 * the compiler client; every host's shell hook starts here.
 */
export async function compressCommandOutput(input: HookInput, output: CommandOutput): Promise<Compression> {
  return noteCompression(input.env, output.toolName, await gatedCompression(input, output)); // what became of it, for stats (docs/stats.md)
}

async function gatedCompression(input: HookInput, output: CommandOutput): Promise<Compression> {
  if (!compressibleTool(input.env, output.toolName)) return untouched(pass());
  // A field nested deeper than JSON.stringify can write back makes the archive and the answer
  // impossible; finding that out by letting JSON.stringify overflow its stack costs ~1.6 s of
  // CPU at 100 000 levels (measured, Bun 1.4.4) — the fuzzer's 5 s bound broke on a loaded
  // machine. Counting the levels first costs one pass over the object's containers.
  if (nestedDeeperThan(output.original, MAX_NESTING))
    return untouched(pass(`compression refused: the tool result nests deeper than ${MAX_NESTING} levels`));
  // The knobs, read once and never evaluated: an invalid value turns compression off for this
  // call (docs/contract.md §8), before any file is read or process spawned.
  const knobs = readSettings(input.env);
  if (!knobs.ok) return untouched(pass(knobs.problem));
  if (output.saved === undefined) {
    const bytes =
      byteLength(output.stdout) + (output.stderr === undefined ? 0 : Buffer.byteLength(output.stderr, "utf8"));
    if (bytes < knobs.settings.minBytes) return untouched(pass());
  }
  return (await import("./compress.ts")).compressOutput(input, output, knobs.settings);
}

/** byteLength(text) → its UTF-8 size. */
export const byteLength = (text: string | Uint8Array): number =>
  typeof text === "string" ? Buffer.byteLength(text, "utf8") : text.length;

/**
 * Deepest nesting compressed. JSON.stringify in the compiled binary writes 20 000 levels back and
 * overflows its stack before 30 000 (measured, Bun 1.4.4); a Bash result nests one or two.
 */
export const MAX_NESTING = 10_000;

/** nestedDeeperThan(value, limit) → true when arrays/objects nest more than limit levels; iterative, so any depth is safe. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== "object") continue;
    const depth = item.depth + 1;
    if (depth > limit) return true;
    for (const child of Array.isArray(item.value) ? item.value : Object.values(item.value)) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth });
    }
  }
  return false;
}
