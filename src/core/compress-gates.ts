// The gates of Bash compression that read nothing but the payload and the environment (docs/contract.md §8,
// gates 2–5 for an inline output): the allowlist, the Bash shape, the nesting, the knobs and the
// size. They live apart from compress.ts so a host can run them before loading it: most Bash
// results are small, and their PostToolUse stops here without evaluating the compressor, the
// watchdog and the compiler client (docs/performance/2026-12-02-io-floor.md: with the
// recall-evidence chunk no longer loaded
// for Bash either, a small result's hook went from 10.5 to 9.1 ms of CPU).
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { Utf8Literal } from "./json-bytes.ts";
import { isPlainObject, stringField } from "./payload.ts";
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

export interface CompressionSettings {
  readonly minBytes: number;
  readonly probeTimeoutMs: number;
  readonly budget: number;
  readonly budgetMax: number;
  readonly persistedBudget: number;
  readonly minSaved: number;
}

/** readSettings(env) → every knob (unset → its default), or the first invalid one, named with its value. */
export function readSettings(env: NodeJS.ProcessEnv): { ok: true; settings: CompressionSettings } | { ok: false; problem: string } {
  const problems: string[] = [];
  const knob = (key: KnobName, fallback: number): number => {
    const { name, max } = KNOBS[key];
    const raw = env[name];
    if (raw === undefined) return fallback;
    const value = parseKnob(raw, max);
    if (value !== undefined) return value;
    problems.push(`${name}=${JSON.stringify(raw.slice(0, 40))} is not a decimal integer from 1 to ${max}; compression is off for this call`);
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
  const allowlist = env.VELESDB_HOOK_COMPRESS_TOOLS ?? "Bash";
  return allowlist.split(/[\s,]+/).includes("Bash");
}

/** What the cheap gates found: a final answer, or the output to compress and the settings to do it with. */
export type BashGates =
  | { readonly kind: "decided"; readonly decision: Decision }
  | {
      readonly kind: "go on";
      readonly toolName: string;
      readonly response: Record<string, unknown>;
      readonly settings: CompressionSettings;
      /** The host's file with the whole output (gate 4 reads it), or the inline output and its UTF-8 size. */
      readonly output: { readonly persisted: string } | { readonly text: string | Uint8Array; readonly bytes: number };
    };

/** bashOutputGates(input) → the answer of gates 2–5 when one of them decides, else what compressing needs. */
export function bashOutputGates(input: HookInput): BashGates {
  const decided = (decision: Decision): BashGates => ({ kind: "decided", decision });
  // Gate 2: the allowlist. Only Bash's output shape is verified; other tools are never compressed.
  const toolName = stringField(input.payload, "tool_name");
  if (toolName === undefined || !compressibleTool(input.env, toolName)) return decided(pass());

  // Gate 3: the Bash shape. A string or an image response is left alone.
  const response = input.payload.tool_response;
  if (!isPlainObject(response)) return decided(pass("tool_response is not an object; Bash output left as is"));
  if (response.isImage === true) return decided(pass());
  // A large payload's stdout is a Utf8Literal (claude.ts asks for it as bytes): the same text.
  const output = response.stdout;
  if (
    (typeof output !== "string" && !(output instanceof Utf8Literal)) ||
    typeof response.stderr !== "string" ||
    typeof response.interrupted !== "boolean" ||
    typeof response.isImage !== "boolean"
  ) {
    return decided(pass("tool_response does not have the Bash shape {stdout, stderr, interrupted, isImage}; output left as is"));
  }

  // A field nested deeper than JSON.stringify can write back makes the archive and the answer
  // impossible; finding that out by letting JSON.stringify overflow its stack costs ~1.6 s of
  // CPU at 100 000 levels (measured, Bun 1.4.4) — the fuzzer's 5 s bound broke on a loaded
  // machine. Counting the levels first costs one pass over the object's containers.
  if (nestedDeeperThan(response, MAX_NESTING)) return decided(pass(`compression refused: the tool_response nests deeper than ${MAX_NESTING} levels`));

  // The knobs, read once and never evaluated: an invalid value turns compression off for this
  // call (docs/contract.md §8), before any file is read or process spawned.
  const knobs = readSettings(input.env);
  if (!knobs.ok) return decided(pass(knobs.problem));
  const settings = knobs.settings;

  // Gates 4 and 5: the text to compile and its size. A persisted output's stdout is cut at
  // the host's inline limit; the complete original is the host's file, which compress.ts reads.
  const persisted = response.persistedOutputPath;
  if (persisted !== undefined && typeof persisted !== "string") return decided(pass("persistedOutputPath is not a string; output left as is"));
  if (persisted !== undefined) return { kind: "go on", toolName, response, settings, output: { persisted } };
  const text = output instanceof Utf8Literal ? output.bytes : output;
  const bytes = typeof text === "string" ? Buffer.byteLength(text, "utf8") : text.length;
  if (bytes < settings.minBytes) return decided(pass());
  return { kind: "go on", toolName, response, settings, output: { text, bytes } };
}

/**
 * compressBashThroughGates(input) → the gates' answer when one decides, else the compressor's:
 * compress.ts is loaded only for an output the gates let through (Claude's PostToolUse and the
 * shell hosts' both start here).
 */
export async function compressBashThroughGates(input: HookInput): Promise<Decision> {
  const gates = bashOutputGates(input);
  if (gates.kind === "decided") return noteCompression(input, gates.decision);
  return noteCompression(input, await (await import("./compress.ts")).compressBashOutput(input, gates));
}

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
