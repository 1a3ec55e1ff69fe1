// A client's registry (settings.json, hooks.json) as read (safe-read.ts) and parsed: a JSON(C)
// object whose `hooks` value, when present, is an object, and in which neither `hooks` nor a key
// of the client's skeleton appears twice (every host reads only the last one, so a merge into
// the first would be silently lost). The parse is pure, so planning (plan-entries.ts) can run on
// bytes alone.
import { getNodeValue } from "jsonc-parser";
import { isJsonObject, type JsonObject } from "./entries.ts";
import { duplicateKey, parseJsonc } from "../files/jsonc-parse.ts";
import { readUserFile, type UserFile, type WritableFile } from "../files/safe-read.ts";

/** The top-level key every client's registry files its hooks under. */
const HOOKS_KEY = "hooks";
export const BOM = "\uFEFF";

/** A registry as found on disk; `refused` means no command may change it. */
export type RegistryFile =
  | Extract<WritableFile, { kind: "absent" }>
  | (Extract<WritableFile, { kind: "present" }> & { readonly hooks: unknown })
  | Extract<UserFile, { kind: "refused" }>;

/** parseRegistryText(text, skeleton) → the `hooks` value of a registry's bytes (a BOM allowed), or why they cannot be merged. Never throws. */
export function parseRegistryText(
  raw: string,
  skeleton?: JsonObject,
): { readonly ok: true; readonly hooks: unknown } | { readonly ok: false; readonly problem: string } {
  const refused = (problem: string) => ({ ok: false as const, problem });
  const text = raw.startsWith(BOM) ? raw.slice(BOM.length) : raw;
  const parsed = parseJsonc(text);
  if (!parsed.ok)
    return refused(
      `does not parse: line ${parsed.line}, column ${parsed.column} (${parsed.code}); fix it or move it aside`,
    );
  const value: unknown = parsed.root ? getNodeValue(parsed.root) : {};
  if (!isJsonObject(value)) return refused("is not a JSON object");
  const duplicate = duplicateKey(text, parsed.root, [HOOKS_KEY, ...Object.keys(skeleton ?? {})]);
  if (duplicate) {
    // The line counts from the first line of the file as the user sees it (a BOM is no line).
    return refused(
      `has ${JSON.stringify(duplicate.key)} twice (again on line ${duplicate.line}); every host reads only the last one: merge them by hand, then run this again`,
    );
  }
  if (value.hooks !== undefined && !isJsonObject(value.hooks))
    return refused('has a "hooks" value that is not an object');
  return { ok: true, hooks: value.hooks };
}

/** readRegistry(path, ourTree, skeleton) → the file with its `hooks` value, or why it must not be touched. Never throws. */
export function readRegistry(registryPath: string, ourTreePath: string, skeleton?: JsonObject): RegistryFile {
  const file = readUserFile(registryPath, ourTreePath);
  if (file.kind !== "present") return file;
  const parsed = parseRegistryText(file.text, skeleton);
  if (!parsed.ok) return { kind: "refused", path: registryPath, problem: parsed.problem };
  return { ...file, hooks: parsed.hooks };
}
