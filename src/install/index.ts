// Installer commands (SPEC §9): install, uninstall, check, doctor. Loaded only by those
// commands (src/cli.ts imports this file lazily with a literal path), so no hook evaluates the
// JSONC, TOML or schema code used here.
//
// Every command first inspects everything it would touch — the stable binary path and each
// selected client's registry — and refuses before the first write when anything is unsafe
// (a broken or foreign link, a directory, a file that does not parse). Only then does it
// write: the binary first (entries must never name a binary that is not there), then each
// registry. Output names files and entries, never a registry's content.
import * as fs from "node:fs";
import { parse as parseJsoncValue } from "jsonc-parser";
import { diagnosticLine } from "../core/decision.ts";
import { inspectBinary, placeBinary, removeBinary, runningBinary, type BinaryState } from "./binary.ts";
import { CLIENTS, type ClientAdapter } from "./clients.ts";
import { configTomlEntries, readCodexConfig, trustOf } from "./codex-trust.ts";
import { runDoctor } from "./doctor.ts";
import { clientReport, isDirectory, Output, writeAll } from "./report.ts";
import { installerContext, ourTree, shown, stableBinaryPath, type InstallerContext } from "./paths.ts";
import { CLIENT_NAMES, type ClientName } from "./registrations.ts";
import {
  judgeRegistry,
  planRegistry,
  readRegistry,
  writeRegistry,
  type OwnedEntry,
  type RegistryFile,
  type RegistryPlan,
} from "./registry.ts";

const EXIT_OK = 0;
const EXIT_PROBLEM = 1;
const EXIT_USAGE = 64;
const LATER_CLIENTS = new Set(["windsurf", "dsh"]);

export interface InstallerOptions {
  /** undefined: the command's default set (SPEC §2). */
  readonly clients: readonly ClientName[] | undefined;
  readonly dryRun: boolean;
  readonly strict: boolean;
}

type Parsed = { readonly ok: true; readonly options: InstallerOptions } | { readonly ok: false; readonly problem: string };

const FLAGS: Readonly<Record<string, ReadonlySet<string>>> = {
  install: new Set(["--client", "--dry-run"]),
  uninstall: new Set(["--client", "--dry-run"]),
  check: new Set(["--client", "--strict"]),
  doctor: new Set(["--client"]),
};

/** parseInstallerArgs("check", ["--client", "codex", "--strict"]) → options, or the usage problem. */
export function parseInstallerArgs(command: string, args: readonly string[]): Parsed {
  const allowed = FLAGS[command];
  if (!allowed) return { ok: false, problem: `unknown command ${JSON.stringify(command)}` };
  let clients: ClientName[] | undefined;
  let dryRun = false;
  let strict = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith("--client=") ? ["--client", arg.slice("--client=".length)] : [arg, undefined];
    if (!allowed.has(flag)) return { ok: false, problem: `${command} does not take ${JSON.stringify(arg)} (options: ${[...allowed].join(", ")})` };
    if (flag === "--dry-run") dryRun = true;
    else if (flag === "--strict") strict = true;
    else {
      const value = inline ?? args[++i];
      if (value === undefined || value === "") return { ok: false, problem: "--client needs a value: claude, codex or all" };
      if (value === "all") clients = [...CLIENT_NAMES];
      else if ((CLIENT_NAMES as readonly string[]).includes(value)) clients = [...new Set([...(clients ?? []), value as ClientName])];
      else if (LATER_CLIENTS.has(value)) return { ok: false, problem: `--client ${value} is not supported by this build yet (supported: ${CLIENT_NAMES.join(", ")}, all)` };
      else return { ok: false, problem: `unknown client ${JSON.stringify(value)} (clients: ${CLIENT_NAMES.join(", ")}, all)` };
    }
  }
  return { ok: true, options: { clients, dryRun, strict } };
}

export async function runInstallerCommand(command: string, args: readonly string[]): Promise<number> {
  const parsed = parseInstallerArgs(command, args);
  if (!parsed.ok) {
    writeErr(diagnosticLine(parsed.problem));
    return EXIT_USAGE;
  }
  const ctx = installerContext();
  const out = new Output();
  let code: number;
  switch (command) {
    case "install":
      code = install(ctx, parsed.options, out);
      break;
    case "uninstall":
      code = uninstall(ctx, parsed.options, out);
      break;
    case "check":
      code = check(ctx, parsed.options, out);
      break;
    default:
      code = await runDoctor(ctx, parsed.options.clients ?? CLIENT_NAMES, out);
  }
  out.flush();
  return code;
}

/** Clients a command acts on: --client, else install's detected ones (their directory exists), else all. */
function selectedClients(ctx: InstallerContext, options: InstallerOptions, command: string): readonly ClientName[] {
  if (options.clients) return options.clients;
  if (command !== "install") return CLIENT_NAMES;
  // A client whose home variable is unusable (a relative CODEX_HOME) is kept, so it is refused
  // out loud rather than skipped in silence.
  return CLIENT_NAMES.filter((name) => {
    const home = CLIENTS[name].clientHome(ctx);
    return !home.ok || isDirectory(home.path);
  });
}

interface Target {
  readonly client: ClientAdapter;
  readonly file: Extract<RegistryFile, { kind: "absent" | "present" }>;
  readonly plan: RegistryPlan;
}

interface Preflight {
  readonly stable: string;
  readonly tree: string;
  readonly targets: readonly Target[];
  readonly refusals: readonly string[];
}

/** preflight → the binary path and, per client, the registry and its edit; or every reason to refuse. */
function preflight(ctx: InstallerContext, clients: readonly ClientName[], mode: "install" | "uninstall"): Preflight {
  const refusals: string[] = [];
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok) {
    return { stable: "", tree: "", targets: [], refusals: [stableResolved.ok ? "" : stableResolved.problem].filter(Boolean) };
  }
  const stable = stableResolved.path;
  const tree = treeResolved.path;
  const targets: Target[] = [];
  for (const name of clients) {
    const client = CLIENTS[name];
    const registryPath = client.registryPath(ctx);
    if (!registryPath.ok) {
      refusals.push(`${name}: ${registryPath.problem}`);
      continue;
    }
    const file = readRegistry(registryPath.path, tree);
    if (file.kind === "refused") {
      refusals.push(`${name}: ${shown(ctx, file.path)} ${file.problem}`);
      continue;
    }
    const planned = planRegistry(file, client, stable, ctx.platform, mode);
    if (!planned.ok) {
      refusals.push(`${name}: ${shown(ctx, file.path)} ${planned.problem}`);
      continue;
    }
    targets.push({ client, file, plan: planned.plan });
  }
  return { stable, tree, targets, refusals };
}

function install(ctx: InstallerContext, options: InstallerOptions, out: Output): number {
  const clients = selectedClients(ctx, options, "install");
  if (clients.length === 0) {
    out.problem(`no supported agent found (looked for ${CLIENT_NAMES.map((n) => describeHome(ctx, CLIENTS[n])).join(" and ")}); name one with --client`);
    return EXIT_PROBLEM;
  }
  const running = runningBinary();
  const pre = preflight(ctx, clients, "install");
  const refusals = [...pre.refusals];
  if (!running.ok) refusals.push(running.problem);
  const binary: BinaryState = pre.stable ? inspectBinary(pre.stable, running) : { state: "absent" };
  if (binary.state === "blocked") refusals.push(`${shown(ctx, pre.stable)} ${binary.problem}`);
  if (refusals.length > 0 || !running.ok) return refuse(out, refusals);

  const verb = options.dryRun ? "would " : "";
  if (options.dryRun) out.line("dry run: nothing is written");
  const binaryChanges = binary.state !== "in step";
  if (binaryChanges) out.line(`binary: ${verb}${options.dryRun ? "copy" : "copied"} this executable to ${shown(ctx, pre.stable)}`);
  else out.line(`binary: ${shown(ctx, pre.stable)} is already this version`);
  if (!options.dryRun && binaryChanges) {
    try {
      placeBinary(running.path, pre.stable);
    } catch (error) {
      out.problem(`could not place the binary at ${shown(ctx, pre.stable)} (${codeOf(error)}); no settings were changed`);
      return EXIT_PROBLEM;
    }
  }
  let failed = false;
  for (const target of pre.targets) {
    failed = applyTarget(ctx, target, "install", options.dryRun, out) || failed;
    if (target.client.name === "codex") {
      codexTrustReminder(ctx, target, options.dryRun, pre.stable, out);
      codexConfigWarning(ctx, pre.stable, out);
    }
  }
  return failed ? EXIT_PROBLEM : EXIT_OK;
}

function uninstall(ctx: InstallerContext, options: InstallerOptions, out: Output): number {
  const clients = selectedClients(ctx, options, "uninstall");
  const pre = preflight(ctx, clients, "uninstall");
  if (pre.refusals.length > 0) return refuse(out, pre.refusals);
  if (options.dryRun) out.line("dry run: nothing is written");
  let failed = false;
  for (const target of pre.targets) {
    failed = applyTarget(ctx, target, "uninstall", options.dryRun, out) || failed;
    if (target.client.name === "codex") codexConfigWarning(ctx, pre.stable, out);
  }
  // The binary goes once no client's registry still names it (unselected clients included).
  const stillUsed = CLIENT_NAMES.filter((name) => !clients.includes(name)).some((name) => clientStillUses(ctx, name, pre.stable, pre.tree));
  const present = fs.existsSync(pre.stable);
  if (!present) out.line(`binary: ${shown(ctx, pre.stable)} is not there`);
  else if (stillUsed || failed) out.line(`binary: kept at ${shown(ctx, pre.stable)} (another client's entries still use it)`);
  else if (options.dryRun) out.line(`binary: would remove ${shown(ctx, pre.stable)}`);
  else {
    try {
      removeBinary(pre.stable, pre.tree);
      out.line(`binary: removed ${shown(ctx, pre.stable)}`);
    } catch (error) {
      out.problem(`could not remove ${shown(ctx, pre.stable)} (${codeOf(error)})`);
      failed = true;
    }
  }
  return failed ? EXIT_PROBLEM : EXIT_OK;
}

/** applyTarget → true when writing failed. Prints what changed (or would). */
function applyTarget(ctx: InstallerContext, target: Target, mode: "install" | "uninstall", dryRun: boolean, out: Output): boolean {
  const { client, file, plan } = target;
  const where = shown(ctx, file.path);
  if (plan.text === (file.kind === "present" ? file.text : "")) {
    out.line(`${client.name}: ${where} ${nothingToDo(file, mode)}`);
    return false;
  }
  const verb = (past: string, present: string): string => (dryRun ? `would ${present}` : past);
  const parts: string[] = [];
  if (file.kind === "absent") parts.push(verb("created (mode 600)", "create it (mode 600)"));
  if (plan.removals.length > 0) parts.push(`${verb("removed", "remove")} ${plan.removals.map(describeRemoval(client)).join(", ")}`);
  if (plan.additions.length > 0) parts.push(`${verb("added", "add")} ${plan.additions.map((row) => row.wireEvent).join(", ")}`);
  if (file.kind === "present") parts.push(`${verb("backup in", "back it up to")} ${where}.velesdb-backup`);
  if (file.kind === "present" && file.linked) parts.push(`${verb("written at", "write at")} the link's target ${shown(ctx, file.target)}`);
  out.line(`${client.name}: ${where}: ${parts.join("; ")}`);
  if (dryRun) return false;
  try {
    writeRegistry(file, plan.text);
    return false;
  } catch (error) {
    out.problem(`${client.name}: could not write ${where} (${codeOf(error)})`);
    return true;
  }
}

function nothingToDo(file: RegistryFile, mode: "install" | "uninstall"): string {
  if (mode === "install") return "is already in step; unchanged";
  return file.kind === "absent" ? "does not exist; nothing to remove" : "has no velesdb-hooks entries; unchanged";
}

/** describeRemoval(client)(entry) → "Stop (bash hooks)", "Notification (not an event velesdb-hooks uses)", "PreToolUse (outdated)". */
function describeRemoval(client: ClientAdapter): (entry: OwnedEntry) => string {
  const expected = new Set(client.rows.map((row) => row.wireEvent));
  return (entry) => {
    if (entry.ownership === "legacy") return `${entry.event} (bash hooks)`;
    if (!expected.has(entry.event)) return `${entry.event} (not an event velesdb-hooks uses)`;
    return entry.event;
  };
}

/**
 * Codex skips a new or changed entry until the user trusts it in /hooks, silently. We never
 * write approvals (that is the user's security decision), so install says it plainly.
 */
function codexTrustReminder(ctx: InstallerContext, target: Target, dryRun: boolean, stable: string, out: Output): void {
  const codexHome = CLIENTS.codex.clientHome(ctx);
  if (!codexHome.ok) return;
  const after = readRegistryValue(target);
  const verdict = judgeRegistry(after, CLIENTS.codex, stable, ctx.platform);
  const trust = trustOf(verdict.owned, target.file.path, readCodexConfig(codexHome.path), ctx.platform);
  const waiting = trust.filter((t) => t.status !== "trusted");
  if (waiting.length === 0) {
    out.line("codex: every velesdb-hooks entry is trusted");
    return;
  }
  out.line(
    `codex: ${dryRun ? "after this install, " : ""}Codex will skip ${waiting.map((t) => t.entry.event).join(", ")} until you trust ${waiting.length === 1 ? "it" : "them"}: start codex, open /hooks and trust the velesdb-hooks entries (install never approves hooks for you)`,
  );
}

/** Entries of ours in config.toml [hooks] run too, and we never edit config.toml: say so. */
function codexConfigWarning(ctx: InstallerContext, stable: string, out: Output): void {
  const codexHome = CLIENTS.codex.clientHome(ctx);
  if (!codexHome.ok) return;
  const config = readCodexConfig(codexHome.path);
  const inToml = configTomlEntries(config, stable);
  if (inToml.length === 0) return;
  out.line(
    `codex: ${shown(ctx, config.path)} [hooks] also holds velesdb-hooks entries (${inToml.map((e) => e.event).join(", ")}); Codex runs those as well, and velesdb-hooks never edits config.toml: remove them there`,
  );
}

function readRegistryValue(target: Target): unknown {
  try {
    const parsedText = target.plan.text.replace(/^\uFEFF/, "");
    const parsed = parsedText.trim() === "" ? {} : (parseJsoncValue(parsedText) as Record<string, unknown>);
    return parsed?.hooks;
  } catch {
    return undefined;
  }
}

function check(ctx: InstallerContext, options: InstallerOptions, out: Output): number {
  const explicit = options.clients !== undefined;
  const clients = selectedClients(ctx, options, "check");
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok) {
    out.problem(stableResolved.ok ? "cannot locate velesdb-hooks' directory" : stableResolved.problem);
    return EXIT_PROBLEM;
  }
  const binary = inspectBinary(stableResolved.path, runningBinary());
  let drift = false;
  let absent = false;
  const repairs: string[] = [];
  for (const name of clients) {
    const report = clientReport(ctx, name, stableResolved.path, treeResolved.path, binary);
    for (const line of report.lines) out.line(line);
    drift ||= report.drifted;
    const counts = explicit || report.homeExists;
    if (report.absent && counts) absent = true;
    if (report.drifted) repairs.push(...report.repairs);
    else if (report.absent && counts && options.strict) repairs.push(`velesdb-hooks install --client ${name}`);
  }
  for (const repair of [...new Set(repairs)]) out.line(`repair: ${repair}`);
  return drift || (options.strict && absent) ? EXIT_PROBLEM : EXIT_OK;
}

function clientStillUses(ctx: InstallerContext, name: ClientName, stable: string, tree: string): boolean {
  const registryPath = CLIENTS[name].registryPath(ctx);
  if (!registryPath.ok) return true;
  const file = readRegistry(registryPath.path, tree);
  if (file.kind === "refused") return true; // Cannot tell: keep the binary.
  if (file.kind === "absent") return false;
  return judgeRegistry(file.hooks, CLIENTS[name], stable, ctx.platform).owned.some((entry) => entry.ownership === "ours");
}

function refuse(out: Output, refusals: readonly string[]): number {
  for (const refusal of refusals) out.problem(`refused: ${refusal}`);
  out.problem("nothing was changed");
  return EXIT_PROBLEM;
}

function describeHome(ctx: InstallerContext, client: ClientAdapter): string {
  const home = client.clientHome(ctx);
  return home.ok ? shown(ctx, home.path) : client.name;
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? "error";
}

function writeErr(text: string): void {
  writeAll(2, text);
}
