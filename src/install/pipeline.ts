// install and uninstall as one pipeline over the client table (SPEC §9), knowing no client by
// name:
// 1. read every file a selected client owns (its registry, its sections) and the manifest of
//    what earlier installs wrote (manifest.ts);
// 2. plan each edit in memory;
// 3. preflight: refuse before the first write when anything is unsafe (a broken or foreign
//    link, a directory, a file that does not parse or holds a key twice, a file whose owner a
//    rewrite would change, markers out of order) — one refusal stops the whole command;
// 4. write: the binary first on install (entries must never name a binary that is not there),
//    then each file, then the manifest; when a write fails, every file this run already
//    changed is put back (bytes, mode, owner, backup), and so is a binary it placed;
// 5. report only what happened, after it happened (a failed write was once announced as
//    "added … backup in …" before it failed). Output names files and entries, never content.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsoncValue } from "jsonc-parser";
import { inspectBinary, placeBinary, removeBinary, runningBinary, type BinaryState } from "./binary.ts";
import { primaryPath, type InstallerClient, type RegistrySpec } from "./clients/client.ts";
import { CLIENTS } from "./clients/index.ts";
import { forget, manifestPath, manifestText, readManifest, recordFor, remember, type Manifest, type ManifestRecord } from "./manifest.ts";
import { ourTree, shown, stableBinaryPath, type InstallerContext } from "./paths.ts";
import {
  errorCode,
  judgeRegistry,
  ownerOfNearest,
  planRegistry,
  readRegistry,
  undoWrite,
  writeUserFile,
  type OwnedEntry,
  type Undo,
  type WritableFile,
} from "./registry.ts";
import type { Output } from "./report.ts";
import { planRules, readRulesFile } from "./rules.ts";

export type Mode = "install" | "uninstall";

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;

/** One file this run would change (or finds unchanged), with what to say about it. */
interface FileChange {
  readonly file: WritableFile;
  /** The file's text after the change; null: the file goes (install created it, it holds nothing else now). */
  readonly text: string | null;
  /** What changes, in both tenses: [past, future] pairs joined into the report line. */
  readonly parts: ReadonlyArray<readonly [past: string, future: string]>;
  /** What follows the file's name when nothing changes (" is already in step; unchanged"). */
  readonly unchanged: string;
  /** What the manifest remembers of this file after the run (install), or undefined (forget it). */
  readonly record: ManifestRecord | undefined;
}

interface ClientPlan {
  readonly client: InstallerClient;
  readonly registryPath: string;
  /** The registry first, then each section. */
  readonly changes: readonly FileChange[];
  /** The registry's `hooks` value after this run. */
  readonly hooksAfter: unknown;
}

/** One registry to act on: a client's current one, or (uninstall) one the manifest remembers. */
interface Target {
  readonly client: InstallerClient;
  readonly registryPath: string;
  readonly withSections: boolean;
}

interface Planned {
  readonly stable: string;
  readonly tree: string;
  readonly manifest: Extract<Manifest, { ok: true }>;
  readonly plans: readonly ClientPlan[];
  readonly refusals: readonly string[];
}

export interface PipelineOptions {
  readonly dryRun: boolean;
  /** --client was given: uninstall then leaves the registries the manifest remembers for other clients alone. */
  readonly explicit: boolean;
}

/** plan(ctx, clients, mode, explicit) → the binary path and, per registry, every file's edit; or every reason to refuse. */
function plan(ctx: InstallerContext, clients: readonly InstallerClient[], mode: Mode, explicit: boolean): Planned | { refusals: string[] } {
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok) return { refusals: [stableResolved.ok ? "velesdb-hooks' directory is unusable" : stableResolved.problem] };
  const stable = stableResolved.path;
  const tree = treeResolved.path;
  const manifest = readManifest(tree);
  if (!manifest.ok) return { refusals: [`${shown(ctx, manifest.path)} (velesdb-hooks' record of what it installed) ${manifest.problem}; move it aside`] };
  const refusals: string[] = [];
  const targets: Target[] = [];
  for (const client of clients) {
    const registryPath = primaryPath(client, ctx);
    if (!registryPath.ok) refusals.push(`${client.name}: ${registryPath.problem}`);
    else targets.push({ client, registryPath: registryPath.path, withSections: true });
  }
  // uninstall without --client: every registry an install of ours wrote, wherever it is.
  if (mode === "uninstall" && !explicit) {
    for (const record of manifest.records) {
      const client = CLIENTS.find((c) => c.name === record.client);
      // A client without a registry (OpenCode) is planned through its sections, at today's paths.
      if (!client?.registry || targets.some((t) => path.resolve(t.registryPath) === path.resolve(record.path))) continue;
      if (client.sections?.some((section) => path.resolve(section.path(ctx)) === path.resolve(record.path))) continue;
      targets.push({ client, registryPath: record.path, withSections: false });
    }
  }
  const plans: ClientPlan[] = [];
  for (const target of targets) {
    const planned = planTarget(ctx, target, stable, tree, manifest, mode);
    if (planned.ok) plans.push(planned.plan);
    else refusals.push(`${target.client.name}: ${planned.problem}`);
  }
  return { stable, tree, manifest, plans, refusals };
}

function planTarget(
  ctx: InstallerContext,
  target: Target,
  stable: string,
  tree: string,
  manifest: Manifest,
  mode: Mode,
): { ok: true; plan: ClientPlan } | { ok: false; problem: string } {
  const { client, registryPath } = target;
  const changes: FileChange[] = [];
  let hooksAfter: unknown;
  if (client.registry) {
    const planned = planRegistryChange(ctx, client, client.registry, registryPath, stable, tree, manifest, mode);
    if (!planned.ok) return planned;
    changes.push(planned.change);
    hooksAfter = planned.hooksAfter;
  }
  for (const section of target.withSections ? (client.sections ?? []) : []) {
    const sectionFile = readRulesFile(section.path(ctx), tree);
    if (sectionFile.kind === "refused") return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionFile.problem}` };
    const sectionPlan = planRules(section, sectionFile.kind === "present" ? sectionFile.text : "", mode, stable);
    if (!sectionPlan.ok) return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionPlan.problem}` };
    const what = `the velesdb-hooks ${section.label}`;
    const sectionRecord = recordFor(manifest, client.name, sectionFile.path);
    const gone = mode === "uninstall" && sectionRecord?.created === true && sectionPlan.text === "" && sectionFile.kind === "present";
    const part: readonly [string, string] =
      mode === "uninstall" ? both("removed", "remove", what) : sectionPlan.before === "absent" ? both("added", "add", what) : [`updated ${what} in place`, `update ${what} in place`];
    changes.push({
      file: sectionFile,
      text: gone ? null : sectionPlan.text,
      parts: gone ? [part, ["deleted the file (install had created it)", "delete the file (install created it)"]] : [part],
      unchanged:
        mode === "install"
          ? `: ${what} is already in step; unchanged`
          : ` ${sectionFile.kind === "absent" ? "does not exist" : `has no velesdb-hooks ${section.label}`}; nothing to remove`,
      record: mode === "install" ? { client: client.name, path: sectionFile.path, created: sectionFile.kind === "absent", added: [] } : undefined,
    });
  }
  return { ok: true, plan: { client, registryPath, changes, hooksAfter } };
}

/** planRegistryChange → the registry's edit for this run (the first change of a client that has one). */
function planRegistryChange(
  ctx: InstallerContext,
  client: InstallerClient,
  registry: RegistrySpec,
  registryPath: string,
  stable: string,
  tree: string,
  manifest: Manifest,
  mode: Mode,
): { ok: true; change: FileChange; hooksAfter: unknown } | { ok: false; problem: string } {
  const file = readRegistry(registryPath, tree, registry.skeleton);
  if (file.kind === "refused") return { ok: false, problem: `${shown(ctx, file.path)} ${file.problem}` };
  const known = recordFor(manifest, client.name, registryPath);
  const planned = planRegistry(file, registry, stable, ctx.platform, mode, known);
  if (!planned.ok) return { ok: false, problem: `${shown(ctx, file.path)} ${planned.problem}` };
  const { removals, additions, deleteFile } = planned.plan;
  const parts: Array<readonly [string, string]> = [];
  if (removals.length > 0) parts.push(both("removed", "remove", removals.map(describeRemoval(registry)).join(", ")));
  if (additions.length > 0) parts.push(both("added", "add", additions.map((row) => row.wireEvent).join(", ")));
  if (deleteFile) parts.push(["deleted the file (install had created it and it holds nothing else)", "delete the file (install created it and it would hold nothing else)"]);
  const record = (created: boolean, added: readonly (readonly string[])[]): ManifestRecord => ({ client: client.name, path: registryPath, created, added });
  const change: FileChange = {
    file,
    text: deleteFile ? null : planned.plan.text,
    parts,
    unchanged: mode === "install" ? " is already in step; unchanged" : file.kind === "absent" ? " does not exist; nothing to remove" : " has no velesdb-hooks entries; unchanged",
    record: mode === "install" ? record(file.kind === "absent", planned.plan.added) : undefined,
  };
  return { ok: true, change, hooksAfter: hooksOf(planned.plan.text) };
}

const both = (past: string, future: string, what: string): readonly [string, string] => [`${past} ${what}`, `${future} ${what}`];

export function install(ctx: InstallerContext, clients: readonly InstallerClient[], options: PipelineOptions, out: Output): number {
  if (clients.length === 0) {
    out.problem(`no supported agent found (looked for ${CLIENTS.map((c) => describeHome(ctx, c)).join(", ")}); name one with --client`);
    return EXIT_PROBLEM;
  }
  const running = runningBinary();
  const planned = plan(ctx, clients, "install", options.explicit);
  const refusals = [...planned.refusals];
  if (!running.ok) refusals.push(running.problem);
  if (!("plans" in planned) || refusals.length > 0 || !running.ok) return refuse(out, refusals);
  const { stable } = planned;
  const binary: BinaryState = inspectBinary(stable, running);
  if (binary.state === "blocked") return refuse(out, [`${shown(ctx, stable)} ${binary.problem}`]);

  const binaryChanges = binary.state !== "in step";
  if (options.dryRun) {
    out.line("dry run: nothing is written");
    out.line(binaryChanges ? `binary: would copy this executable to ${shown(ctx, stable)}` : `binary: ${shown(ctx, stable)} is already this version`);
    report(ctx, planned.plans, "install", true, stable, out);
    return EXIT_OK;
  }
  if (binaryChanges) {
    try {
      placeBinary(running.path, stable);
    } catch (error) {
      out.problem(`could not place the binary at ${shown(ctx, stable)} (${errorCode(error)}); no settings were changed`);
      return EXIT_PROBLEM;
    }
  }
  const written = writeAll(ctx, planned, "install", out);
  if (!written) {
    // Entries of this run are all undone; a binary this run put where none was goes too.
    if (binary.state === "absent") {
      try {
        removeBinary(stable, planned.tree);
        out.problem(`binary: ${shown(ctx, stable)} removed again`);
      } catch (error) {
        out.problem(`binary: could not remove ${shown(ctx, stable)} again (${errorCode(error)})`);
      }
    }
    return EXIT_PROBLEM;
  }
  out.line(binaryChanges ? `binary: copied this executable to ${shown(ctx, stable)}` : `binary: ${shown(ctx, stable)} is already this version`);
  report(ctx, planned.plans, "install", false, stable, out);
  return EXIT_OK;
}

export function uninstall(ctx: InstallerContext, clients: readonly InstallerClient[], options: PipelineOptions, out: Output): number {
  const planned = plan(ctx, clients, "uninstall", options.explicit);
  if (!("plans" in planned) || planned.refusals.length > 0) return refuse(out, planned.refusals);
  const { stable, tree } = planned;
  if (options.dryRun) out.line("dry run: nothing is written");
  else if (!writeAll(ctx, planned, "uninstall", out)) return EXIT_PROBLEM;
  report(ctx, planned.plans, "uninstall", options.dryRun, stable, out);

  const cleaned = new Set(planned.plans.map((p) => path.resolve(p.registryPath)));
  const users = stillNamedBy(ctx, stable, tree, cleaned, remainingRecords(planned));
  const present = fs.existsSync(stable);
  if (!present) out.line(`binary: ${shown(ctx, stable)} is not there`);
  else if (users.length > 0) out.line(`binary: kept at ${shown(ctx, stable)} (${users.join(", ")} still ${users.length === 1 ? "uses" : "use"} it)`);
  else if (options.dryRun) out.line(`binary: would remove ${shown(ctx, stable)}`);
  else {
    try {
      const movedTo = removeBinary(stable, tree);
      out.line(`binary: removed ${shown(ctx, stable)}${movedTo ? ` (it was running: moved to ${shown(ctx, movedTo)}, deleted by the next install or uninstall)` : ""}`);
    } catch (error) {
      out.problem(`could not remove ${shown(ctx, stable)} (${errorCode(error)})`);
      return EXIT_PROBLEM;
    }
  }
  return EXIT_OK;
}

/** The manifest's records after this run: install remembers each file it planned, uninstall forgets them. */
function remainingRecords(planned: Planned): ManifestRecord[] {
  let records = [...planned.manifest.records];
  for (const clientPlan of planned.plans) {
    for (const change of clientPlan.changes) {
      if (change.record) records = remember(records, change.record);
      else records = forget(records, clientPlan.client.name, change.file.path);
    }
  }
  return records;
}

/**
 * writeAll → true when every file was written. Files whose text changes are written in plan
 * order, then the manifest; the first failure undoes every write before it (last first) and
 * says what was restored.
 */
function writeAll(ctx: InstallerContext, planned: Planned, mode: Mode, out: Output): boolean {
  const writes: Array<{ readonly label: string; readonly file: WritableFile; readonly text: string | null; readonly backup: boolean }> = [];
  for (const clientPlan of planned.plans) {
    for (const change of clientPlan.changes) {
      if (isChange(change)) writes.push({ label: clientPlan.client.name, file: change.file, text: change.text, backup: change.text !== null });
    }
  }
  const manifestWrite = manifestChange(planned, remainingRecords(planned));
  if (manifestWrite) writes.push({ label: "manifest", ...manifestWrite, backup: false });
  const done: Array<{ readonly label: string; readonly where: string; readonly undo: Undo }> = [];
  for (const write of writes) {
    const where = shown(ctx, write.file.path);
    try {
      done.push({ label: write.label, where, undo: writeUserFile(write.file, write.text, write.backup) });
    } catch (error) {
      out.problem(`${write.label}: could not ${write.text === null ? "delete" : "write"} ${where} (${errorCode(error)})`);
      let restoredAll = true;
      for (const { label, where: was, undo } of done.reverse()) {
        try {
          undoWrite(undo);
          out.problem(`${label}: ${was} restored`);
        } catch (undoError) {
          restoredAll = false;
          const backup = undo.backup ? `; its previous bytes are in ${shown(ctx, undo.backup.path)}` : "";
          out.problem(`${label}: could not restore ${was} (${errorCode(undoError)})${backup}`);
        }
      }
      out.problem(restoredAll ? `nothing was ${mode === "install" ? "installed" : "uninstalled"}: every file is as it was` : "some files could not be restored (see above)");
      return false;
    }
  }
  return true;
}

/** manifestChange(planned, records) → the manifest's new state when it differs from the file; undefined when it does not. */
function manifestChange(planned: Planned, records: readonly ManifestRecord[]): { file: WritableFile; text: string | null } | undefined {
  const text = manifestText(records);
  const current = planned.manifest.text;
  if (text === current || (text === undefined && current === undefined)) return undefined;
  const target = manifestPath(planned.tree);
  let file: WritableFile;
  if (current === undefined) file = { kind: "absent", path: target, target, owner: ownerOfNearest(planned.tree) };
  else {
    const st = fs.lstatSync(target);
    file = { kind: "present", path: target, target, linked: false, text: current, mode: st.mode & 0o7777, owner: { uid: st.uid, gid: st.gid } };
  }
  return { file, text: text ?? null };
}

function isChange(change: FileChange): boolean {
  return change.text !== (change.file.kind === "present" ? change.file.text : "");
}

/** report: per client, each file's line (what changed, or that nothing did), then what the client adds. */
function report(ctx: InstallerContext, plans: readonly ClientPlan[], mode: Mode, dryRun: boolean, stable: string, out: Output): void {
  for (const clientPlan of plans) {
    const { client } = clientPlan;
    for (const change of clientPlan.changes) out.line(`${client.name}: ${shown(ctx, change.file.path)}${describeChange(ctx, change, dryRun)}`);
    const after = client.afterWrite?.(ctx, { mode, dryRun, registryPath: clientPlan.registryPath, hooksAfter: clientPlan.hooksAfter, stable }) ?? [];
    for (const line of after) out.line(line);
  }
}

function describeChange(ctx: InstallerContext, change: FileChange, dryRun: boolean): string {
  const { file } = change;
  if (!isChange(change)) return change.unchanged;
  const tense = dryRun ? 1 : 0;
  const parts: string[] = [];
  if (file.kind === "absent") parts.push(dryRun ? "would create it (mode 600)" : "created (mode 600)");
  for (const part of change.parts) parts.push(dryRun ? `would ${part[tense]}` : part[tense]);
  if (file.kind === "present" && change.text !== null) parts.push(`${dryRun ? "would back it up to" : "backup in"} ${shown(ctx, file.path)}.velesdb-backup`);
  if (file.kind === "present" && file.linked) parts.push(`${dryRun ? "would write at" : "written at"} the link's target ${shown(ctx, file.target)}`);
  return `: ${parts.join("; ")}`;
}

/**
 * stillNamedBy → the files (as shown) that can still run the stable binary after this run:
 * every registry a client reads by default, every one the manifest remembers, and what each
 * client adds (Codex config.toml), minus the registries this run cleaned. A registry that
 * cannot be read counts as a user: the binary is kept rather than deleted under an entry.
 */
function stillNamedBy(ctx: InstallerContext, stable: string, tree: string, cleaned: ReadonlySet<string>, records: readonly ManifestRecord[]): string[] {
  const candidates: Array<{ client: InstallerClient | undefined; path: string }> = [];
  for (const client of CLIENTS) {
    const registryPath = client.registry?.path(ctx);
    if (registryPath?.ok) candidates.push({ client, path: registryPath.path });
  }
  for (const record of records) {
    const client = CLIENTS.find((c) => c.name === record.client);
    if (client?.sections?.some((section) => path.resolve(section.path(ctx)) === path.resolve(record.path))) continue;
    candidates.push({ client, path: record.path });
  }
  const users: string[] = [];
  const seen = new Set<string>(cleaned);
  for (const candidate of candidates) {
    const key = path.resolve(candidate.path);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!candidate.client || registryNames(candidate.client, candidate.path, stable, tree, ctx)) users.push(shown(ctx, candidate.path));
  }
  for (const client of CLIENTS) {
    const other = client.alsoNamesBinary?.(ctx, stable);
    if (other !== undefined) users.push(shown(ctx, other));
  }
  return users;
}

function registryNames(client: InstallerClient, registryPath: string, stable: string, tree: string, ctx: InstallerContext): boolean {
  // A client without a registry names the binary in its section file: alsoNamesBinary says so.
  if (!client.registry) return false;
  const file = readRegistry(registryPath, tree, client.registry.skeleton);
  if (file.kind === "refused") return fs.existsSync(registryPath); // Cannot tell: keep the binary.
  if (file.kind === "absent") return false;
  return judgeRegistry(file.hooks, client.registry, stable, ctx.platform).owned.some((entry) => entry.ownership === "ours");
}

/** describeRemoval(client)(entry) → "Stop (bash hooks)", "Notification (not an event velesdb-hooks uses)", "PreToolUse". */
function describeRemoval(registry: RegistrySpec): (entry: OwnedEntry) => string {
  const expected = new Set(registry.rows.map((row) => row.wireEvent));
  return (entry) => {
    if (entry.ownership === "legacy") return `${entry.event} (bash hooks)`;
    if (!expected.has(entry.event)) return `${entry.event} (not an event velesdb-hooks uses)`;
    return entry.event;
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

export function refuse(out: Output, refusals: readonly string[]): number {
  for (const refusal of refusals) out.problem(`refused: ${refusal}`);
  out.problem("nothing was changed");
  return EXIT_PROBLEM;
}

function describeHome(ctx: InstallerContext, client: InstallerClient): string {
  const home = client.home(ctx);
  return home.ok ? shown(ctx, home.path) : client.name;
}
