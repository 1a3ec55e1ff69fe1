// install and uninstall as one pipeline over the client table (SPEC §9), knowing no client by
// name: read every file a selected client owns (its registry, its sections), plan each edit
// in memory, preflight (refuse before the first write when anything is unsafe: a broken or
// foreign link, a directory, a file that does not parse, markers out of order), write (the
// binary first on install — entries must never name a binary that is not there — then each
// file), and report. Output names files and entries, never a file's content.
import * as fs from "node:fs";
import { parse as parseJsoncValue } from "jsonc-parser";
import { inspectBinary, placeBinary, removeBinary, runningBinary, type BinaryState } from "./binary.ts";
import type { InstallerClient } from "./clients/client.ts";
import { CLIENTS } from "./clients/index.ts";
import { ourTree, shown, stableBinaryPath, type InstallerContext } from "./paths.ts";
import { judgeRegistry, planRegistry, readRegistry, writeRegistry, type OwnedEntry, type WritableFile } from "./registry.ts";
import type { Output } from "./report.ts";
import { planRules, readRulesFile } from "./rules.ts";

export type Mode = "install" | "uninstall";

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;

/** One file this run would change (or finds unchanged), with what to say about it. */
interface FileChange {
  readonly file: WritableFile;
  /** The file's text after the change; equal to its current text when nothing changes. */
  readonly text: string;
  /** What changes, in both tenses: ["added", "add"] pairs joined into the report line. */
  readonly parts: ReadonlyArray<readonly [past: string, future: string]>;
  /** What follows the file's name when nothing changes (" is already in step; unchanged"). */
  readonly unchanged: string;
}

interface ClientPlan {
  readonly client: InstallerClient;
  readonly registryPath: string;
  /** The registry first, then each section. */
  readonly changes: readonly FileChange[];
  /** The registry's `hooks` value after this run. */
  readonly hooksAfter: unknown;
}

interface Planned {
  readonly stable: string;
  readonly tree: string;
  readonly plans: readonly ClientPlan[];
  readonly refusals: readonly string[];
}

/** plan(ctx, clients, mode) → the binary path and, per client, every file's edit; or every reason to refuse. */
function plan(ctx: InstallerContext, clients: readonly InstallerClient[], mode: Mode): Planned {
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok) {
    return { stable: "", tree: "", plans: [], refusals: [stableResolved.ok ? "" : stableResolved.problem].filter(Boolean) };
  }
  const stable = stableResolved.path;
  const tree = treeResolved.path;
  const refusals: string[] = [];
  const plans: ClientPlan[] = [];
  for (const client of clients) {
    const planned = planClient(ctx, client, stable, tree, mode);
    if (planned.ok) plans.push(planned.plan);
    else refusals.push(`${client.name}: ${planned.problem}`);
  }
  return { stable, tree, plans, refusals };
}

function planClient(
  ctx: InstallerContext,
  client: InstallerClient,
  stable: string,
  tree: string,
  mode: Mode,
): { ok: true; plan: ClientPlan } | { ok: false; problem: string } {
  const registryPath = client.registry.path(ctx);
  if (!registryPath.ok) return registryPath;
  const file = readRegistry(registryPath.path, tree, client.registry.skeleton);
  if (file.kind === "refused") return { ok: false, problem: `${shown(ctx, file.path)} ${file.problem}` };
  const planned = planRegistry(file, client.registry, stable, ctx.platform, mode);
  if (!planned.ok) return { ok: false, problem: `${shown(ctx, file.path)} ${planned.problem}` };
  const { removals, additions } = planned.plan;
  const parts: Array<readonly [string, string]> = [];
  if (removals.length > 0) parts.push(["removed", "remove"].map((verb) => `${verb} ${removals.map(describeRemoval(client)).join(", ")}`) as [string, string]);
  if (additions.length > 0) parts.push(["added", "add"].map((verb) => `${verb} ${additions.map((row) => row.wireEvent).join(", ")}`) as [string, string]);
  const changes: FileChange[] = [
    {
      file,
      text: planned.plan.text,
      parts,
      unchanged: mode === "install" ? " is already in step; unchanged" : file.kind === "absent" ? " does not exist; nothing to remove" : " has no velesdb-hooks entries; unchanged",
    },
  ];
  for (const section of client.sections ?? []) {
    const sectionFile = readRulesFile(section.path(ctx), tree);
    if (sectionFile.kind === "refused") return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionFile.problem}` };
    const sectionPlan = planRules(section, sectionFile.kind === "present" ? sectionFile.text : "", mode);
    if (!sectionPlan.ok) return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionPlan.problem}` };
    const what = `the velesdb-hooks ${section.label}`;
    const part: readonly [string, string] =
      mode === "uninstall" ? [`removed ${what}`, `remove ${what}`] : sectionPlan.before === "absent" ? [`added ${what}`, `add ${what}`] : [`updated ${what} in place`, `update ${what} in place`];
    changes.push({
      file: sectionFile,
      text: sectionPlan.text,
      parts: [part],
      unchanged:
        mode === "install"
          ? `: ${what} is already in step; unchanged`
          : ` ${sectionFile.kind === "absent" ? "does not exist" : `has no velesdb-hooks ${section.label}`}; nothing to remove`,
    });
  }
  return { ok: true, plan: { client, registryPath: registryPath.path, changes, hooksAfter: hooksOf(planned.plan.text) } };
}

export interface PipelineOptions {
  readonly dryRun: boolean;
}

export function install(ctx: InstallerContext, clients: readonly InstallerClient[], options: PipelineOptions, out: Output): number {
  if (clients.length === 0) {
    out.problem(`no supported agent found (looked for ${CLIENTS.map((c) => describeHome(ctx, c)).join(", ")}); name one with --client`);
    return EXIT_PROBLEM;
  }
  const running = runningBinary();
  const planned = plan(ctx, clients, "install");
  const refusals = [...planned.refusals];
  if (!running.ok) refusals.push(running.problem);
  const binary: BinaryState = planned.stable ? inspectBinary(planned.stable, running) : { state: "absent" };
  if (binary.state === "blocked") refusals.push(`${shown(ctx, planned.stable)} ${binary.problem}`);
  if (refusals.length > 0 || !running.ok) return refuse(out, refusals);

  const { stable } = planned;
  if (options.dryRun) out.line("dry run: nothing is written");
  const binaryChanges = binary.state !== "in step";
  if (binaryChanges) out.line(`binary: ${options.dryRun ? "would copy" : "copied"} this executable to ${shown(ctx, stable)}`);
  else out.line(`binary: ${shown(ctx, stable)} is already this version`);
  if (!options.dryRun && binaryChanges) {
    try {
      placeBinary(running.path, stable);
    } catch (error) {
      out.problem(`could not place the binary at ${shown(ctx, stable)} (${codeOf(error)}); no settings were changed`);
      return EXIT_PROBLEM;
    }
  }
  const failed = writeClients(ctx, planned.plans, "install", options.dryRun, stable, out);
  return failed ? EXIT_PROBLEM : EXIT_OK;
}

export function uninstall(ctx: InstallerContext, clients: readonly InstallerClient[], options: PipelineOptions, out: Output): number {
  const planned = plan(ctx, clients, "uninstall");
  if (planned.refusals.length > 0) return refuse(out, planned.refusals);
  const { stable, tree } = planned;
  if (options.dryRun) out.line("dry run: nothing is written");
  let failed = writeClients(ctx, planned.plans, "uninstall", options.dryRun, stable, out);
  // The binary goes once no client's registry still names it (unselected clients included).
  const stillUsed = CLIENTS.filter((client) => !clients.includes(client)).some((client) => registryStillUses(ctx, client, stable, tree));
  const present = fs.existsSync(stable);
  if (!present) out.line(`binary: ${shown(ctx, stable)} is not there`);
  else if (stillUsed || failed) out.line(`binary: kept at ${shown(ctx, stable)} (another client's entries still use it)`);
  else if (options.dryRun) out.line(`binary: would remove ${shown(ctx, stable)}`);
  else {
    try {
      removeBinary(stable, tree);
      out.line(`binary: removed ${shown(ctx, stable)}`);
    } catch (error) {
      out.problem(`could not remove ${shown(ctx, stable)} (${codeOf(error)})`);
      failed = true;
    }
  }
  return failed ? EXIT_PROBLEM : EXIT_OK;
}

/** writeClients → true when a write failed. Writes each client's files in order and reports each. */
function writeClients(ctx: InstallerContext, plans: readonly ClientPlan[], mode: Mode, dryRun: boolean, stable: string, out: Output): boolean {
  let failed = false;
  for (const clientPlan of plans) {
    const { client } = clientPlan;
    for (const change of clientPlan.changes) failed = writeChange(ctx, client, change, dryRun, out) || failed;
    const after = client.afterWrite?.(ctx, { mode, dryRun, registryPath: clientPlan.registryPath, hooksAfter: clientPlan.hooksAfter, stable }) ?? [];
    for (const line of after) out.line(line);
  }
  return failed;
}

/** writeChange → true when writing failed. Prints what changed (or would). */
function writeChange(ctx: InstallerContext, client: InstallerClient, change: FileChange, dryRun: boolean, out: Output): boolean {
  const { file, text } = change;
  const where = shown(ctx, file.path);
  if (text === (file.kind === "present" ? file.text : "")) {
    out.line(`${client.name}: ${where}${change.unchanged}`);
    return false;
  }
  const tense = dryRun ? 1 : 0;
  const parts: string[] = [];
  if (file.kind === "absent") parts.push(dryRun ? "would create it (mode 600)" : "created (mode 600)");
  for (const part of change.parts) parts.push(dryRun ? `would ${part[tense]}` : part[tense]);
  if (file.kind === "present") parts.push(`${dryRun ? "would back it up to" : "backup in"} ${where}.velesdb-backup`);
  if (file.kind === "present" && file.linked) parts.push(`${dryRun ? "would write at" : "written at"} the link's target ${shown(ctx, file.target)}`);
  out.line(`${client.name}: ${where}: ${parts.join("; ")}`);
  if (dryRun) return false;
  try {
    writeRegistry(file, text);
    return false;
  } catch (error) {
    out.problem(`${client.name}: could not write ${where} (${codeOf(error)})`);
    return true;
  }
}

/** describeRemoval(client)(entry) → "Stop (bash hooks)", "Notification (not an event velesdb-hooks uses)", "PreToolUse". */
function describeRemoval(client: InstallerClient): (entry: OwnedEntry) => string {
  const expected = new Set(client.registry.rows.map((row) => row.wireEvent));
  return (entry) => {
    if (entry.ownership === "legacy") return `${entry.event} (bash hooks)`;
    if (!expected.has(entry.event)) return `${entry.event} (not an event velesdb-hooks uses)`;
    return entry.event;
  };
}

function registryStillUses(ctx: InstallerContext, client: InstallerClient, stable: string, tree: string): boolean {
  const registryPath = client.registry.path(ctx);
  if (!registryPath.ok) return true;
  const file = readRegistry(registryPath.path, tree, client.registry.skeleton);
  if (file.kind === "refused") return true; // Cannot tell: keep the binary.
  if (file.kind === "absent") return false;
  return judgeRegistry(file.hooks, client.registry, stable, ctx.platform).owned.some((entry) => entry.ownership === "ours");
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

export function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? "error";
}
