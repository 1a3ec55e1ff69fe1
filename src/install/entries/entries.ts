// What an entry of ours looks like, and how we recognise one (docs/contract.md §9 "Ownership"). An entry
// is ours when the program it runs is our installed binary, or when it carries the bash
// reference's marker (so installing over the bash hooks replaces them instead of running both).
// Nothing else is ever touched: a user's own hooks, another tool's hooks and entries that only
// mention velesdb somewhere stay exactly as they are.
import { firstShellWord, powershellCallProgram } from "./shell-words.ts";

/** Path fragments of the bash reference's hook trees; any entry naming one is ours. */
export const LEGACY_MARKERS = [
  ".claude/hooks/velesdb-memory/",
  ".codex/hooks/velesdb-memory/",
  ".codeium/windsurf/hooks/velesdb-memory/",
] as const;

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export type Ownership = "ours" | "legacy" | "foreign";

/** One handler of ours found in a registry: where it sits and what it says. */
export interface OwnedEntry {
  readonly event: string;
  /** Index under `hooks.<event>`: the group (grouped layout), or the handler itself (flat layout). */
  readonly group: number;
  /** Index inside the group's `hooks` (always 0 in the flat layout). */
  readonly handler: number;
  readonly ownership: "ours" | "legacy";
  readonly value: unknown;
  /** The enclosing group's matcher, as written (undefined when absent). */
  readonly matcher: unknown;
  /** How many handlers share the group (ours included). */
  readonly groupSize: number;
  /** The group holds keys other than matcher/hooks. */
  readonly groupExtraKeys: boolean;
}

/**
 * ownershipOf(handler, "/home/u/.velesdb-hooks/bin/velesdb-hooks", ["command"]) → "ours" |
 * "legacy" | "foreign". `commandFields` are the handler fields holding a command line (the
 * client's; Copilot spells them `bash` and `powershell`).
 */
export function ownershipOf(
  handler: unknown,
  binaryPath: string,
  commandFields: readonly string[] = ["command"],
): Ownership {
  if (!isJsonObject(handler)) return "foreign";
  const commands = commandFields
    .map((field) => handler[field])
    .filter((value): value is string => typeof value === "string");
  const runs = (command: string) =>
    command === binaryPath || firstShellWord(command) === binaryPath || powershellCallProgram(command) === binaryPath;
  if (commands.some(runs)) return "ours";
  const words = [...commands, handler.commandWindows, ...(Array.isArray(handler.args) ? handler.args : [])];
  for (const word of words) {
    if (typeof word !== "string") continue;
    const forward = word.replaceAll("\\", "/");
    if (LEGACY_MARKERS.some((marker) => forward.includes(marker))) return "legacy";
  }
  return "foreign";
}

/** canonicalJson(value) → compact JSON with sorted keys and null/undefined fields dropped. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== null && value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** sameJson(a, b) → true when both hold the same data, whatever the key order. */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
