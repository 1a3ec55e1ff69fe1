// Each file's change as a pure function of the bytes already read (plan-run.ts reads them): a
// registry's (its entries through plan-entries.ts, and the MCP server when it lives in the same
// file, as Gemini's and Qwen's do) and a rules section's (rules.ts). Nothing here touches the
// disk, so a plan is tested from text alone, as test/plan-entries.test.ts does for the entries.
import { parse as parseJsoncValue } from "jsonc-parser";
import type { InstallerClient, RegistrySpec, SectionSpec } from "../client.ts";
import type { OwnedEntry } from "../entries/entries.ts";
import type { FileChange, Mode } from "./file-change.ts";
import { recordFor, type Manifest, type ManifestRecord } from "./manifest.ts";
import type { planMcpEdit } from "../server/mcp-edit.ts";
import { printable, shown, type InstallerContext } from "../paths.ts";
import { planEntries } from "./plan-entries.ts";
import type { RegistryFile } from "../entries/registry-file.ts";
import { planRules, type RulesFile } from "../entries/rules.ts";

/** McpEditFor(text, creates, standalone) → the MCP server edit of a file's text (planMcpEdit for this client and run). */
export type McpEditFor = (text: string, creates: boolean, standalone: boolean) => ReturnType<typeof planMcpEdit>;

/** What planRegistryChange needs: the run, the client and its registry as read, and where the run's notes go. */
export interface RegistryChangeInput {
  readonly ctx: InstallerContext;
  readonly client: InstallerClient;
  readonly registry: RegistrySpec;
  readonly registryPath: string;
  /** The registry as readRegistry found it (registry-file.ts); a refused one never gets here. */
  readonly file: Exclude<RegistryFile, { kind: "refused" }>;
  /** The installed binary's path, which every entry runs. */
  readonly stable: string;
  readonly manifest: Manifest;
  readonly mode: Mode;
  /** The MCP server edit, when the server lives in the registry's own file (Gemini, Qwen). */
  readonly sharedMcp: McpEditFor | undefined;
  /** Lines the run prints after its report (appended to). */
  readonly notes: string[];
}

/**
 * planRegistryChange → the registry's edit for this run (the first change of a client that has
 * one). With `sharedMcp` (the server lives in the registry's file): uninstall takes the server
 * out first, so the registry's plan sees what is left; install adds it to the planned text.
 */
export function planRegistryChange(
  input: RegistryChangeInput,
): { ok: true; change: FileChange; hooksAfter: unknown } | { ok: false; problem: string } {
  const { ctx, client, registry, registryPath, file, stable, manifest, mode, sharedMcp, notes } = input;
  const known = recordFor(manifest, client.name, registryPath);
  let sharedEdit: ReturnType<McpEditFor> | undefined;
  if (sharedMcp && mode === "uninstall") sharedEdit = sharedMcp(file.kind === "present" ? file.text : "", false, false);
  if (sharedEdit && !sharedEdit.ok) return { ok: false, problem: `${shown(ctx, file.path)} ${sharedEdit.problem}` };
  const before =
    file.kind === "present"
      ? sharedEdit?.ok && sharedEdit.edit.text !== null
        ? sharedEdit.edit.text
        : file.text
      : null;
  const planned = planEntries({
    text: before,
    registry,
    binaryPath: stable,
    platform: ctx.platform,
    mode,
    record: known,
  });
  if (!planned.ok) return { ok: false, problem: `${shown(ctx, file.path)} ${planned.problem}` };
  if (sharedMcp && mode === "install") {
    sharedEdit = sharedMcp(planned.plan.deleteFile ? "" : planned.plan.text, file.kind === "absent", false);
    if (!sharedEdit.ok) return { ok: false, problem: `${shown(ctx, file.path)} ${sharedEdit.problem}` };
  }
  const { removals, additions, deleteFile } = planned.plan;
  const parts: Array<readonly [string, string]> = [];
  if (removals.length > 0) parts.push(both("removed", "remove", removals.map(describeRemoval(registry)).join(", ")));
  if (additions.length > 0) parts.push(both("added", "add", additions.map((row) => row.wireEvent).join(", ")));
  const serverEdit = sharedEdit?.ok ? sharedEdit.edit : undefined;
  if (serverEdit) {
    parts.push(...serverEdit.parts);
    if (serverEdit.unchanged !== "") notes.push(`${client.name}: ${shown(ctx, file.path)}${serverEdit.unchanged}`);
  }
  if (deleteFile)
    parts.push([
      "deleted the file (install had created it and it holds nothing else)",
      "delete the file (install created it and it would hold nothing else)",
    ]);
  const record = (created: boolean, added: readonly (readonly string[])[]): ManifestRecord => ({
    client: client.name,
    path: registryPath,
    created,
    added,
  });
  const change: FileChange = {
    file,
    text: serverEdit && mode === "install" ? serverEdit.text : deleteFile ? null : planned.plan.text,
    parts,
    unchanged:
      mode === "install"
        ? " is already in step; unchanged"
        : file.kind === "absent"
          ? " does not exist; nothing to remove"
          : " has no velesdb-hooks entries; unchanged",
    record: mode === "install" ? record(file.kind === "absent", planned.plan.added) : undefined,
    ...(serverEdit ? { mcp: { record: serverEdit.record } } : {}),
  };
  return { ok: true, change, hooksAfter: hooksOf(planned.plan.text) };
}

/** What planSectionChange needs: the run, the client, and its section's file as read. */
export interface SectionChangeInput {
  readonly ctx: InstallerContext;
  readonly client: InstallerClient;
  readonly section: SectionSpec;
  /** The section's file as readRulesFile found it (rules.ts); a refused one never gets here. */
  readonly file: Exclude<RulesFile, { kind: "refused" }>;
  readonly stable: string;
  readonly manifest: Manifest;
  readonly mode: Mode;
}

/** planSectionChange → the edit of one section of ours in a client's file (rules.ts: Windsurf's rules, the plugin clients' files). */
export function planSectionChange(
  input: SectionChangeInput,
): { ok: true; change: FileChange } | { ok: false; problem: string } {
  const { ctx, client, section, file: sectionFile, stable, manifest, mode } = input;
  const sectionPlan = planRules(section, sectionFile.kind === "present" ? sectionFile.text : "", mode, stable);
  if (!sectionPlan.ok) return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionPlan.problem}` };
  const what = `the velesdb-hooks ${section.label}`;
  const sectionRecord = recordFor(manifest, client.name, sectionFile.path);
  const gone =
    mode === "uninstall" &&
    sectionRecord?.created === true &&
    sectionPlan.text === "" &&
    sectionFile.kind === "present";
  const part: readonly [string, string] =
    mode === "uninstall"
      ? both("removed", "remove", what)
      : sectionPlan.before === "absent"
        ? both("added", "add", what)
        : [`updated ${what} in place`, `update ${what} in place`];
  return {
    ok: true,
    change: {
      file: sectionFile,
      text: gone ? null : sectionPlan.text,
      parts: gone
        ? [part, ["deleted the file (install had created it)", "delete the file (install created it)"]]
        : [part],
      unchanged:
        mode === "install"
          ? `: ${what} is already in step; unchanged`
          : ` ${sectionFile.kind === "absent" ? "does not exist" : `has no velesdb-hooks ${section.label}`}; nothing to remove`,
      record:
        mode === "install"
          ? { client: client.name, path: sectionFile.path, created: sectionFile.kind === "absent", added: [] }
          : undefined,
    },
  };
}

const both = (past: string, future: string, what: string): readonly [string, string] => [
  `${past} ${what}`,
  `${future} ${what}`,
];

/** describeRemoval(client)(entry) → "Stop (bash hooks)", "Notification (not an event velesdb-hooks uses)", "PreToolUse". */
function describeRemoval(registry: RegistrySpec): (entry: OwnedEntry) => string {
  const expected = new Set(registry.rows.map((row) => row.wireEvent));
  return (entry) => {
    if (entry.ownership === "legacy") return `${printable(entry.event)} (bash hooks)`;
    if (!expected.has(entry.event)) return `${printable(entry.event)} (not an event velesdb-hooks uses)`;
    return printable(entry.event);
  };
}

function hooksOf(text: string): unknown {
  try {
    const body = text.replace(/^\uFEFF/, "");
    const parsed = body.trim() === "" ? {} : (parseJsoncValue(body) as Record<string, unknown>);
    return parsed?.hooks;
  } catch {
    return undefined;
  }
}
