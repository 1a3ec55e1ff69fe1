// install and uninstall as one pipeline over the client table (docs/contract.md §9), knowing no client by
// name:
// 1. read every file a selected client owns (its registry, its sections) and the manifest of
//    what earlier installs wrote (manifest.ts);
// 2. plan each edit in memory;
// 3. preflight: refuse before the first write when anything is unsafe (a broken or foreign
//    link, a link root may not follow in another user's home (foreign-home.ts), a directory,
//    a file that does not parse or holds a key twice, a file whose owner a rewrite would
//    change, markers out of order) — one refusal stops the whole command;
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
import { clientFiles, foreignHomeOwner, linkProblem, reachFor, type Reach } from "./foreign-home.ts";
import {
  forget,
  manifestPath,
  manifestText,
  readManifest,
  recordFor,
  remember,
  type Manifest,
  type ManifestRecord,
} from "./manifest.ts";
import { ourTree, printable, shown, stableBinaryPath, type InstallerContext } from "./paths.ts";
import { errorCode } from "../core/state.ts";
import type { OwnedEntry } from "./entries.ts";
import { ownerOfNearest } from "./file-owner.ts";
import { judgeRegistry } from "./owned-entries.ts";
import { planEntries } from "./plan-entries.ts";
import { readRegistry } from "./registry-file.ts";
import type { WritableFile } from "./safe-read.ts";
import { backupPath, undoWrite, writeUserFile, type Undo } from "./user-file-write.ts";
import type { Output } from "./report.ts";
import { MAX_MCP_FILE_BYTES, type McpSource } from "./mcp.ts";
import { mcpInstallCommand, mcpReport } from "./mcp-check.ts";
import { planMcpEdit } from "./mcp-edit.ts";
import { readMcpFile } from "./mcp-read.ts";
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
  /** The file holds (or held) an MCP server entry of ours: its record after the run, undefined to forget it. */
  readonly mcp?: { readonly record: ManifestRecord | undefined };
}

interface ClientPlan {
  readonly client: InstallerClient;
  readonly registryPath: string;
  /** The registry first, then each section. */
  readonly changes: readonly FileChange[];
  /** The registry's `hooks` value after this run. */
  readonly hooksAfter: unknown;
  /** Lines reported after the files' (an MCP server kept as the user configured it, a client without one). */
  readonly notes: readonly string[];
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
  /** Why a path may not be reached now (root in another user's home, see foreign-home.ts); undefined: it may. */
  readonly reach: Reach;
}

export interface PipelineOptions {
  readonly dryRun: boolean;
  /** install --mcp / --mcp-url: the velesdb-memory server to register for each client. */
  readonly mcp?: McpSource;
  /** --client was given: uninstall then leaves the registries the manifest remembers for other clients alone. */
  readonly explicit: boolean;
  /**
   * Runs the command again while holding the installer's lock (index.ts, lock.ts), when this
   * run finds something to write; a run that refuses, or finds everything in step, takes no
   * lock and so changes nothing at all. Undefined: already held (or not wanted).
   */
  readonly whileLocked?: (run: () => number) => number;
}

/** plan(ctx, clients, mode, explicit) → the binary path and, per registry, every file's edit; or every reason to refuse. */
function plan(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  mode: Mode,
  explicit: boolean,
  mcp?: McpSource,
): Planned | { refusals: string[] } {
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok)
    return { refusals: [stableResolved.ok ? "velesdb-hooks' directory is unusable" : stableResolved.problem] };
  const stable = stableResolved.path;
  const tree = treeResolved.path;
  const reach = reachFor(ctx);
  for (const own of [stable, manifestPath(tree)]) {
    const problem = reach(own);
    if (problem) return { refusals: [`${shown(ctx, own)} ${problem}`] };
  }
  const manifest = readManifest(tree);
  if (!manifest.ok)
    return {
      refusals: [
        `${shown(ctx, manifest.path)} (velesdb-hooks' record of what it installed) ${manifest.problem}; move it aside`,
      ],
    };
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
      if (record.kind === "mcp") continue; // with its client's plan (planMcp)
      const client = CLIENTS.find((c) => c.name === record.client);
      // A client without a registry (OpenCode) is planned through its sections, at today's paths.
      if (!client?.registry || targets.some((t) => path.resolve(t.registryPath) === path.resolve(record.path)))
        continue;
      if (client.sections?.some((section) => path.resolve(section.path(ctx)) === path.resolve(record.path))) continue;
      const problem = recordProblem(ctx, client, record.path);
      if (problem)
        refusals.push(
          `${client.name}: ${shown(ctx, manifest.path)} names ${shown(ctx, record.path)}, which ${problem}`,
        );
      else targets.push({ client, registryPath: record.path, withSections: false });
    }
  }
  const plans: ClientPlan[] = [];
  for (const target of targets) {
    const unreachable = clientFiles(ctx, target.client, target.registryPath, target.withSections).find(
      (p) => reach(p) !== undefined,
    );
    if (unreachable !== undefined) {
      refusals.push(`${target.client.name}: ${shown(ctx, unreachable)} ${reach(unreachable)}`);
      continue;
    }
    const planned = planTarget(ctx, target, stable, tree, manifest, mode, mcp);
    if (planned.ok) plans.push(planned.plan);
    else refusals.push(`${target.client.name}: ${planned.problem}`);
  }
  return { stable, tree, manifest, plans, refusals, reach };
}

/**
 * recordProblem(ctx, client, path) → why uninstall may not act on a path only the record names
 * (what follows "which"), or undefined. In one's own home the record leads nowhere one could
 * not go anyway. For root in another user's home the record is that user's word (the file is
 * theirs by design), so it is obeyed only for a file that user owns, reached through that
 * user's links, and named like a file the client writes (docs/decisions.md#installer).
 */
function recordProblem(ctx: InstallerContext, client: InstallerClient, recorded: string): string | undefined {
  const owner = foreignHomeOwner(ctx.home);
  if (!owner) return undefined;
  const registry = client.registry?.path(ctx);
  const name = registry?.ok ? path.basename(registry.path) : undefined;
  if (client.configFile === undefined && path.basename(recorded) !== name) {
    return `is not a file ${client.name} reads hooks from (${name ?? "its registry"}); velesdb-hooks never wrote it: remove that record`;
  }
  const problem = linkProblem(recorded, owner, (p) => shown(ctx, p));
  if (problem) return problem;
  try {
    const st = fs.statSync(recorded);
    if (st.uid !== owner.uid) {
      const again =
        client.configFile === undefined
          ? ""
          : ` (to clean it, name it: uninstall --client ${client.name} --config PATH)`;
      return `belongs to uid ${st.uid}, not to the home's owner (uid ${owner.uid}); run by another uid, velesdb-hooks obeys that record only for the owner's files${again}`;
    }
  } catch {
    // Gone, or not reachable: reading it says so.
  }
  return undefined;
}

function planTarget(
  ctx: InstallerContext,
  target: Target,
  stable: string,
  tree: string,
  manifest: Manifest,
  mode: Mode,
  mcp: McpSource | undefined,
): { ok: true; plan: ClientPlan } | { ok: false; problem: string } {
  const { client, registryPath } = target;
  const notes: string[] = [];
  // The MCP server entry (install --mcp, or an uninstall that finds one of ours remembered).
  const spot = target.withSections ? client.mcp?.files[0] : undefined;
  const spotPath = spot?.path(ctx);
  if (mode === "install" && mcp && !client.mcp)
    notes.push(
      `${client.name}: MCP server not written: ${client.mcpUnchecked ?? "velesdb-hooks does not know where this agent reads MCP servers"}`,
    );
  // Hooks without the server they point at lock opted-in edits (docs/mcp-server.md): install without
  // --mcp says so at once, with the command that wires it, rather than leaving it to check.
  if (mode === "install" && !mcp && client.mcp && target.withSections && mcpReport(ctx, client, tree, true).drifted) {
    notes.push(
      `${client.name}: note: no usable velesdb-memory MCP server where this agent reads one; the hooks ask for its tools. Add it: ${mcpInstallCommand(client)}`,
    );
  }
  if (spotPath && !spotPath.ok && mode === "install" && mcp) return { ok: false, problem: spotPath.problem };
  const mcpPath = spotPath?.ok ? spotPath.path : undefined;
  const mcpRecord = mcpPath === undefined ? undefined : recordFor(manifest, client.name, mcpPath, "mcp");
  const mcpActive =
    spot !== undefined && mcpPath !== undefined && (mode === "install" ? mcp !== undefined : mcpRecord !== undefined);
  const mcpEdit: McpEdit = (text, creates, standalone) =>
    planMcpEdit({
      ctx,
      client,
      spec: client.mcp!,
      spot: spot!,
      filePath: mcpPath!,
      text,
      creates,
      mode,
      source: mcp,
      record: mcpRecord,
      mayDelete: standalone,
    });
  // Gemini and Qwen keep servers in the registry's own file: one edit of that file.
  const shared = mcpActive && client.registry !== undefined && path.resolve(mcpPath) === path.resolve(registryPath);

  const changes: FileChange[] = [];
  let hooksAfter: unknown;
  if (client.registry) {
    const planned = planRegistryChange({
      ctx,
      client,
      registry: client.registry,
      registryPath,
      stable,
      tree,
      manifest,
      mode,
      sharedMcp: shared ? mcpEdit : undefined,
      notes,
    });
    if (!planned.ok) return planned;
    changes.push(planned.change);
    hooksAfter = planned.hooksAfter;
  }
  if (mcpActive && !shared) {
    const read = readMcpFile(mcpPath, spot.format, tree, [spot.servers(ctx)]);
    if (read.kind === "refused") return { ok: false, problem: `${shown(ctx, read.path)} ${read.problem}` };
    const edit = mcpEdit(read.kind === "present" ? read.file.text : "", read.kind === "absent", true);
    if (!edit.ok) return { ok: false, problem: `${shown(ctx, mcpPath)} ${edit.problem}` };
    changes.push({
      file: read.file,
      text: edit.edit.text,
      parts: edit.edit.parts,
      unchanged: edit.edit.unchanged,
      record: undefined,
      mcp: { record: edit.edit.record },
    });
  }
  for (const section of target.withSections ? (client.sections ?? []) : []) {
    const sectionFile = readRulesFile(section.path(ctx), tree);
    if (sectionFile.kind === "refused")
      return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionFile.problem}` };
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
    changes.push({
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
    });
  }
  return { ok: true, plan: { client, registryPath, changes, hooksAfter, notes } };
}

/** McpEdit(text, creates, standalone) → the MCP server edit of a file's text (planMcpEdit for this client and run). */
type McpEdit = (text: string, creates: boolean, standalone: boolean) => ReturnType<typeof planMcpEdit>;

/** What planRegistryChange needs: the run, the client and its registry, and where the run's notes go. */
interface RegistryChangeInput {
  readonly ctx: InstallerContext;
  readonly client: InstallerClient;
  readonly registry: RegistrySpec;
  readonly registryPath: string;
  /** The installed binary's path, which every entry runs. */
  readonly stable: string;
  /** Our own tree (a registry resolving into it is refused). */
  readonly tree: string;
  readonly manifest: Manifest;
  readonly mode: Mode;
  /** The MCP server edit, when the server lives in the registry's own file (Gemini, Qwen). */
  readonly sharedMcp: McpEdit | undefined;
  /** Lines the run prints after its report (appended to). */
  readonly notes: string[];
}

/**
 * planRegistryChange → the registry's edit for this run (the first change of a client that has
 * one). With `sharedMcp` (the server lives in the registry's file): uninstall takes the server
 * out first, so the registry's plan sees what is left; install adds it to the planned text.
 */
function planRegistryChange(
  input: RegistryChangeInput,
): { ok: true; change: FileChange; hooksAfter: unknown } | { ok: false; problem: string } {
  const { ctx, client, registry, registryPath, stable, tree, manifest, mode, sharedMcp, notes } = input;
  const file = readRegistry(registryPath, tree, registry.skeleton);
  if (file.kind === "refused") return { ok: false, problem: `${shown(ctx, file.path)} ${file.problem}` };
  const known = recordFor(manifest, client.name, registryPath);
  let sharedEdit: ReturnType<McpEdit> | undefined;
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

const both = (past: string, future: string, what: string): readonly [string, string] => [
  `${past} ${what}`,
  `${future} ${what}`,
];

export function install(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  options: PipelineOptions,
  out: Output,
): number {
  if (clients.length === 0) {
    out.problem(
      `no supported agent found (looked for ${CLIENTS.map((c) => describeHome(ctx, c)).join(", ")}); name one with --client`,
    );
    return EXIT_PROBLEM;
  }
  const running = runningBinary();
  const planned = plan(ctx, clients, "install", options.explicit, options.mcp);
  const refusals = [...planned.refusals];
  if (!running.ok) refusals.push(running.problem);
  if (!("plans" in planned) || refusals.length > 0 || !running.ok) return refuse(out, refusals);
  const { stable } = planned;
  const binary: BinaryState = inspectBinary(stable, running);
  if (binary.state === "blocked") return refuse(out, [`${shown(ctx, stable)} ${binary.problem}`]);

  const binaryChanges = binary.state !== "in step";
  if (options.dryRun) {
    out.line("dry run: nothing is written");
    out.line(
      binaryChanges
        ? `binary: would copy this executable to ${shown(ctx, stable)}`
        : `binary: ${shown(ctx, stable)} is already this version`,
    );
    report(ctx, planned.plans, "install", true, stable, out);
    return EXIT_OK;
  }
  // Planned again under the lock: what was read so far may be changed by a command that holds it.
  if (options.whileLocked && (binaryChanges || writesOf(planned).length > 0))
    return options.whileLocked(() => install(ctx, clients, { ...options, whileLocked: undefined }, out));
  if (binaryChanges) {
    try {
      placeBinary(running.path, stable);
    } catch (error) {
      out.problem(
        `could not place the binary at ${shown(ctx, stable)} (${errorCode(error)}); no settings were changed`,
      );
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
  out.line(
    binaryChanges
      ? `binary: copied this executable to ${shown(ctx, stable)}`
      : `binary: ${shown(ctx, stable)} is already this version`,
  );
  report(ctx, planned.plans, "install", false, stable, out);
  return EXIT_OK;
}

export function uninstall(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  options: PipelineOptions,
  out: Output,
): number {
  const planned = plan(ctx, clients, "uninstall", options.explicit);
  if (!("plans" in planned) || planned.refusals.length > 0) return refuse(out, planned.refusals);
  const { stable, tree } = planned;
  if (!options.dryRun && options.whileLocked && (writesOf(planned).length > 0 || fs.existsSync(stable))) {
    return options.whileLocked(() => uninstall(ctx, clients, { ...options, whileLocked: undefined }, out));
  }
  if (options.dryRun) out.line("dry run: nothing is written");
  else if (!writeAll(ctx, planned, "uninstall", out)) return EXIT_PROBLEM;
  report(ctx, planned.plans, "uninstall", options.dryRun, stable, out);

  const cleaned = new Set(planned.plans.map((p) => path.resolve(p.registryPath)));
  const users = stillNamedBy(ctx, stable, tree, cleaned, remainingRecords(planned), planned.reach);
  const present = fs.existsSync(stable);
  if (!present) out.line(`binary: ${shown(ctx, stable)} is not there`);
  else if (users.length > 0)
    out.line(
      `binary: kept at ${shown(ctx, stable)} (${users.join(", ")} still ${users.length === 1 ? "uses" : "use"} it)`,
    );
  else if (options.dryRun) out.line(`binary: would remove ${shown(ctx, stable)}`);
  else {
    try {
      const movedTo = removeBinary(stable, tree);
      out.line(
        `binary: removed ${shown(ctx, stable)}${movedTo ? ` (it was running: moved to ${shown(ctx, movedTo)}, deleted by the next install or uninstall)` : ""}`,
      );
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
      if (change.mcp?.record)
        records = remember(forget(records, clientPlan.client.name, change.file.path, "mcp"), change.mcp.record);
      else if (change.mcp) records = forget(records, clientPlan.client.name, change.file.path, "mcp");
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
  const writes = writesOf(planned);
  const done: Array<{ readonly label: string; readonly where: string; readonly undo: Undo }> = [];
  for (const write of writes) {
    const where = shown(ctx, write.file.path);
    // Checked again just before the write: a link swapped in since the plan is refused too.
    const moved = planned.reach(write.file.path);
    try {
      if (moved !== undefined) throw new Error(moved);
      done.push({ label: write.label, where, undo: writeUserFile(write.file, write.text, write.backup) });
    } catch (error) {
      out.problem(
        `${write.label}: could not ${write.text === null ? "delete" : "write"} ${where} (${moved ?? errorCode(error)})`,
      );
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
      out.problem(
        restoredAll
          ? `nothing was ${mode === "install" ? "installed" : "uninstalled"}: every file is as it was`
          : "some files could not be restored (see above)",
      );
      return false;
    }
  }
  return true;
}

type PlannedWrite = {
  readonly label: string;
  readonly file: WritableFile;
  readonly text: string | null;
  readonly backup: boolean;
};

/** writesOf(planned) → every file write the plan needs, in order: the files whose text changes, then the manifest. */
function writesOf(planned: Planned): PlannedWrite[] {
  const writes: PlannedWrite[] = [];
  for (const clientPlan of planned.plans) {
    for (const change of clientPlan.changes) {
      if (isChange(change))
        writes.push({
          label: clientPlan.client.name,
          file: change.file,
          text: change.text,
          backup: change.text !== null,
        });
    }
  }
  const manifestWrite = manifestChange(planned, remainingRecords(planned));
  if (manifestWrite) writes.push({ label: "manifest", ...manifestWrite, backup: false });
  return writes;
}

/** manifestChange(planned, records) → the manifest's new state when it differs from the file; undefined when it does not. */
function manifestChange(
  planned: Planned,
  records: readonly ManifestRecord[],
): { file: WritableFile; text: string | null } | undefined {
  const text = manifestText(records);
  const current = planned.manifest.text;
  if (text === current || (text === undefined && current === undefined)) return undefined;
  const target = manifestPath(planned.tree);
  let file: WritableFile;
  if (current === undefined) file = { kind: "absent", path: target, target, owner: ownerOfNearest(planned.tree) };
  else {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(target);
    } catch {
      // Gone since it was read (another command, before this one took the lock): a write is
      // due either way, and the run under the lock reads it again.
    }
    file = st
      ? {
          kind: "present",
          path: target,
          target,
          linked: false,
          text: current,
          mode: st.mode & 0o7777,
          owner: { uid: st.uid, gid: st.gid },
        }
      : { kind: "absent", path: target, target, owner: ownerOfNearest(planned.tree) };
  }
  return { file, text: text ?? null };
}

function isChange(change: FileChange): boolean {
  return change.text !== (change.file.kind === "present" ? change.file.text : "");
}

/** report: per client, each file's line (what changed, or that nothing did), then what the client adds. */
function report(
  ctx: InstallerContext,
  plans: readonly ClientPlan[],
  mode: Mode,
  dryRun: boolean,
  stable: string,
  out: Output,
): void {
  for (const clientPlan of plans) {
    const { client } = clientPlan;
    for (const change of clientPlan.changes)
      out.line(`${client.name}: ${shown(ctx, change.file.path)}${describeChange(ctx, change, dryRun)}`);
    for (const note of clientPlan.notes) out.line(note);
    const after =
      client.afterWrite?.(ctx, {
        mode,
        dryRun,
        registryPath: clientPlan.registryPath,
        hooksAfter: clientPlan.hooksAfter,
        stable,
      }) ?? [];
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
  if (file.kind === "present" && change.text !== null)
    parts.push(`${dryRun ? "would back it up to" : "backup in"} ${shown(ctx, backupPath(file))}`);
  if (file.kind === "present" && file.linked)
    parts.push(`${dryRun ? "would write at" : "written at"} the link's target ${shown(ctx, file.target)}`);
  return `: ${parts.join("; ")}`;
}

/**
 * stillNamedBy → the files (as shown) that can still run the stable binary after this run:
 * every registry a client reads by default, every one the manifest remembers, and what each
 * client adds (Codex config.toml), minus the registries this run cleaned. A registry that
 * cannot be read counts as a user: the binary is kept rather than deleted under an entry.
 */
function stillNamedBy(
  ctx: InstallerContext,
  stable: string,
  tree: string,
  cleaned: ReadonlySet<string>,
  records: readonly ManifestRecord[],
  reach: Reach,
): string[] {
  const candidates: Array<{ client: InstallerClient | undefined; path: string }> = [];
  for (const client of CLIENTS) {
    const registryPath = client.registry?.path(ctx);
    if (registryPath?.ok) candidates.push({ client, path: registryPath.path });
  }
  for (const record of records) {
    // A server entry of ours runs the shared front, this very binary (src/mcp/front.ts); an
    // earlier install's direct entry ran velesdb-memory, and names no stable path of ours.
    if (record.kind === "mcp") {
      if (reach(record.path) !== undefined || mcpFileNames(record.path, stable))
        candidates.push({ client: undefined, path: record.path });
      continue;
    }
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
    // A file root may not reach for this user (foreign-home.ts) is not read; it keeps the binary.
    if (
      !candidate.client ||
      reach(candidate.path) !== undefined ||
      registryNames(candidate.client, candidate.path, stable, tree, ctx)
    ) {
      users.push(shown(ctx, candidate.path));
    }
  }
  for (const client of CLIENTS) {
    const unreachable = client.alsoReads?.(ctx).find((p) => reach(p) !== undefined);
    if (unreachable !== undefined) {
      users.push(shown(ctx, unreachable));
      continue;
    }
    const other = client.alsoNamesBinary?.(ctx, stable);
    if (other !== undefined) users.push(shown(ctx, other));
  }
  return users;
}

/** mcpFileNames(file, stable) → the MCP file still holds the stable path (as JSON or TOML spell it); unreadable: true, the binary is kept. */
function mcpFileNames(file: string, stable: string): boolean {
  try {
    if (fs.statSync(file).size > MAX_MCP_FILE_BYTES) return true;
    return fs.readFileSync(file, "utf8").includes(JSON.stringify(stable).slice(1, -1));
  } catch (error) {
    return errorCode(error) !== "ENOENT";
  }
}

function registryNames(
  client: InstallerClient,
  registryPath: string,
  stable: string,
  tree: string,
  ctx: InstallerContext,
): boolean {
  // A client without a registry names the binary in its section file: alsoNamesBinary says so.
  if (!client.registry) return false;
  const file = readRegistry(registryPath, tree, client.registry.skeleton);
  if (file.kind === "refused") return fs.existsSync(registryPath); // Cannot tell: keep the binary.
  if (file.kind === "absent") return false;
  return judgeRegistry(file.hooks, client.registry, stable, ctx.platform).owned.some(
    (entry) => entry.ownership === "ours",
  );
}

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

export function refuse(out: Output, refusals: readonly string[]): number {
  for (const refusal of refusals) out.problem(`refused: ${refusal}`);
  out.problem("nothing was changed");
  return EXIT_PROBLEM;
}

function describeHome(ctx: InstallerContext, client: InstallerClient): string {
  const home = client.home(ctx);
  return home.ok ? shown(ctx, home.path) : client.name;
}
