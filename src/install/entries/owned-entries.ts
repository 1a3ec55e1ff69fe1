// Which handlers of a registry are ours (entries.ts says how one is recognised) and whether each
// row a client registers is in step: what check, doctor and planning all start from.
import type { Registration, RegistrySpec } from "../client.ts";
import { isJsonObject, ownershipOf, sameJson, type JsonObject, type OwnedEntry } from "./entries.ts";

/** How a registry files handlers and where they keep their command line (a RegistrySpec's part that ownership needs). */
export type RegistryShape = Pick<RegistrySpec, "layout" | "commandFields">;

const GROUPED: RegistryShape = { layout: "grouped" };

/** ownedEntries(hooks, binary, shape) → every handler of ours in a `hooks` object, in file order. */
export function ownedEntries(hooks: unknown, binaryPath: string, shape: RegistryShape = GROUPED): OwnedEntry[] {
  const layout = shape.layout;
  const found: OwnedEntry[] = [];
  if (!isJsonObject(hooks)) return found;
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    list.forEach((item, g) => {
      if (layout === "flat") {
        // Windsurf, Copilot: each element is a handler; there is no group to share or to keep.
        // A Copilot handler carries its own matcher, which is what the row's matcher becomes.
        const ownership = ownershipOf(item, binaryPath, shape.commandFields);
        if (ownership === "foreign") return;
        const matcher = isJsonObject(item) ? item.matcher : undefined;
        found.push({
          event,
          group: g,
          handler: 0,
          ownership,
          value: item,
          matcher,
          groupSize: 1,
          groupExtraKeys: false,
        });
        return;
      }
      if (!isJsonObject(item) || !Array.isArray(item.hooks)) return;
      const group = item;
      const handlers = group.hooks as unknown[];
      handlers.forEach((handler, h) => {
        const ownership = ownershipOf(handler, binaryPath, shape.commandFields);
        if (ownership === "foreign") return;
        found.push({
          event,
          group: g,
          handler: h,
          ownership,
          value: handler,
          matcher: group.matcher,
          groupSize: handlers.length,
          groupExtraKeys: Object.keys(group).some((key) => key !== "matcher" && key !== "hooks"),
        });
      });
    });
  }
  return found;
}

export type RowState = "in step" | "missing" | "differs" | "duplicated" | "legacy";

export interface RowVerdict {
  readonly row: Registration;
  readonly state: RowState;
}

export interface RegistryVerdict {
  readonly state: "in step" | "drifted" | "absent";
  readonly rows: readonly RowVerdict[];
  /** Entries of ours under events we do not register (or no longer register). */
  readonly unexpected: readonly OwnedEntry[];
  readonly owned: readonly OwnedEntry[];
}

/** judgeRegistry(hooks, registry, binary, platform) → per-row state and the registry's overall state. */
export function judgeRegistry(
  hooks: unknown,
  registry: RegistrySpec,
  binaryPath: string,
  platform: NodeJS.Platform,
): RegistryVerdict {
  const owned = ownedEntries(hooks, binaryPath, registry);
  const rows = registry.rows.map((row): RowVerdict => {
    const here = owned.filter((entry) => entry.event === row.wireEvent);
    if (here.length === 0) return { row, state: "missing" };
    if (here.length > 1) return { row, state: "duplicated" };
    const entry = here[0]!;
    if (entry.ownership === "legacy") return { row, state: "legacy" };
    return { row, state: entryInStep(entry, row, registry.handler(row, binaryPath, platform)) ? "in step" : "differs" };
  });
  const expected = new Set(registry.rows.map((row) => row.wireEvent));
  const unexpected = owned.filter((entry) => !expected.has(entry.event));
  const state =
    owned.length === 0
      ? "absent"
      : rows.every((r) => r.state === "in step") && unexpected.length === 0
        ? "in step"
        : "drifted";
  return { state, rows, unexpected, owned };
}

function entryInStep(entry: OwnedEntry, row: Registration, wanted: JsonObject): boolean {
  return sameJson(entry.value, wanted) && entry.matcher === row.matcher && !entry.groupExtraKeys;
}
