// Installer commands (SPEC §9): install, uninstall, check, doctor. Loaded only by those
// commands (src/cli.ts imports this file lazily with a literal path), so no hook evaluates the
// JSONC, TOML or schema code used here.
//
// Every command first inspects everything it would touch — the stable binary path, each
// selected client's registry and Windsurf's rules file — and refuses before the first write
// when anything is unsafe (a broken or foreign link, a directory, a file that does not parse,
// rules markers out of order). Only then does it write: the binary first (entries must never
// name a binary that is not there), then each registry, then the rules file. Output names
// files and entries, never a file's content.
//
// The dsh client's hooks.json lives where the user chooses: `--config PATH` (install,
// uninstall, check, doctor), default ~/.dsh/velesdb-hooks.json. A relative PATH is resolved
// against the cwd once, here: the harness needs an absolute `configPath`, and so does every
// later check. `--config` is only taken together with `--client dsh` (or `all`), so it can
// never silently redirect another client.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsoncValue } from "jsonc-parser";
import { diagnosticLine } from "../core/decision.ts";
import { inspectBinary, placeBinary, removeBinary, runningBinary, type BinaryState } from "./binary.ts";
import { CLIENTS, windsurfRulesPath, type ClientAdapter } from "./clients.ts";
import { configTomlEntries, readCodexConfig, trustOf } from "./codex-trust.ts";
import { runDoctor } from "./doctor.ts";
import { writeFully } from "../core/output.ts";
import { isDirectory } from "../core/state.ts";
import { clientReport, installCommand, Output } from "./report.ts";
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
  type WritableFile,
} from "./registry.ts";
import { planRules, readRulesFile, type RulesState } from "./rules.ts";

const EXIT_OK = 0;
const EXIT_PROBLEM = 1;
const EXIT_USAGE = 64;

export interface InstallerOptions {
  /** undefined: the command's default set (SPEC §2). */
  readonly clients: readonly ClientName[] | undefined;
  readonly dryRun: boolean;
  readonly strict: boolean;
  /** `--config PATH` for the dsh client, as typed (resolved against the cwd later). */
  readonly config?: string;
}

type Parsed = { readonly ok: true; readonly options: InstallerOptions } | { readonly ok: false; readonly problem: string };

const FLAGS: Readonly<Record<string, ReadonlySet<string>>> = {
  install: new Set(["--client", "--config", "--dry-run"]),
  uninstall: new Set(["--client", "--config", "--dry-run"]),
  check: new Set(["--client", "--config", "--strict"]),
  doctor: new Set(["--client", "--config"]),
};
const VALUE_FLAGS = ["--client", "--config"] as const;

/** parseInstallerArgs("check", ["--client", "codex", "--strict"]) → options, or the usage problem. */
export function parseInstallerArgs(command: string, args: readonly string[]): Parsed {
  const allowed = FLAGS[command];
  if (!allowed) return { ok: false, problem: `unknown command ${JSON.stringify(command)}` };
  let clients: ClientName[] | undefined;
  let dryRun = false;
  let strict = false;
  let config: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const valued = VALUE_FLAGS.find((f) => arg.startsWith(`${f}=`));
    const [flag, inline] = valued ? [valued, arg.slice(valued.length + 1)] : [arg, undefined];
    if (!allowed.has(flag)) return { ok: false, problem: `${command} does not take ${JSON.stringify(arg)} (options: ${[...allowed].join(", ")})` };
    if (flag === "--dry-run") dryRun = true;
    else if (flag === "--strict") strict = true;
    else if (flag === "--config") {
      const value = inline ?? args[++i];
      if (value === undefined || value === "") return { ok: false, problem: "--config needs the path of the DeepSeek harness hooks.json" };
      config = value;
    } else {
      const value = inline ?? args[++i];
      if (value === undefined || value === "") return { ok: false, problem: `--client needs a value: ${CLIENT_NAMES.join(", ")} or all` };
      if (value === "all") clients = [...CLIENT_NAMES];
      else if ((CLIENT_NAMES as readonly string[]).includes(value)) clients = [...new Set([...(clients ?? []), value as ClientName])];
      else return { ok: false, problem: `unknown client ${JSON.stringify(value)} (clients: ${CLIENT_NAMES.join(", ")}, all)` };
    }
  }
  if (config !== undefined && !clients?.includes("dsh")) {
    return { ok: false, problem: "--config names the DeepSeek harness hooks.json: use it with --client dsh" };
  }
  return { ok: true, options: { clients, dryRun, strict, ...(config !== undefined ? { config } : {}) } };
}

export async function runInstallerCommand(command: string, args: readonly string[]): Promise<number> {
  const parsed = parseInstallerArgs(command, args);
  if (!parsed.ok) {
    writeErr(diagnosticLine(parsed.problem));
    return EXIT_USAGE;
  }
  const base = installerContext();
  const ctx: InstallerContext =
    parsed.options.config === undefined ? base : { ...base, dshConfig: path.resolve(base.cwd, parsed.options.config) };
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
  readonly file: Exclude<RegistryFile, { kind: "refused" }>;
  readonly plan: RegistryPlan;
  /** Windsurf's rules file and its text after the change. */
  readonly rules?: { readonly file: WritableFile; readonly before: RulesState; readonly text: string };
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
    if (name !== "windsurf") {
      targets.push({ client, file, plan: planned.plan });
      continue;
    }
    const rulesFile = readRulesFile(windsurfRulesPath(ctx), tree);
    if (rulesFile.kind === "refused") {
      refusals.push(`${name}: ${shown(ctx, rulesFile.path)} ${rulesFile.problem}`);
      continue;
    }
    const rulesPlan = planRules(rulesFile.kind === "present" ? rulesFile.text : "", mode);
    if (!rulesPlan.ok) {
      refusals.push(`${name}: ${shown(ctx, rulesFile.path)} ${rulesPlan.problem}`);
      continue;
    }
    targets.push({ client, file, plan: planned.plan, rules: { file: rulesFile, before: rulesPlan.before, text: rulesPlan.text } });
  }
  return { stable, tree, targets, refusals };
}

function install(ctx: InstallerContext, options: InstallerOptions, out: Output): number {
  const clients = selectedClients(ctx, options, "install");
  if (clients.length === 0) {
    out.problem(`no supported agent found (looked for ${CLIENT_NAMES.map((n) => describeHome(ctx, CLIENTS[n])).join(", ")}); name one with --client`);
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
    failed = applyRules(ctx, target, "install", options.dryRun, out) || failed;
    if (target.client.name === "codex") {
      codexTrustReminder(ctx, target, options.dryRun, pre.stable, out);
      codexConfigWarning(ctx, pre.stable, out);
    }
    if (target.client.name === "dsh") for (const line of dshPluginRow(target.file.path)) out.line(line);
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
    failed = applyRules(ctx, target, "uninstall", options.dryRun, out) || failed;
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

/**
 * applyRules → true when writing failed. Windsurf's rules section: added, updated in place,
 * removed, or left as it is; the same backup and write policy as a registry.
 */
function applyRules(ctx: InstallerContext, target: Target, mode: "install" | "uninstall", dryRun: boolean, out: Output): boolean {
  const rules = target.rules;
  if (!rules) return false;
  const { file, before, text } = rules;
  const where = shown(ctx, file.path);
  const name = target.client.name;
  if (text === (file.kind === "present" ? file.text : "")) {
    if (mode === "install") out.line(`${name}: ${where}: the velesdb-hooks rules section is already in step; unchanged`);
    else out.line(`${name}: ${where} ${file.kind === "absent" ? "does not exist" : "has no velesdb-hooks rules section"}; nothing to remove`);
    return false;
  }
  const verb = (past: string, present: string): string => (dryRun ? `would ${present}` : past);
  const parts: string[] = [];
  if (file.kind === "absent") parts.push(verb("created (mode 600)", "create it (mode 600)"));
  if (mode === "uninstall") parts.push(verb("removed the velesdb-hooks rules section", "remove the velesdb-hooks rules section"));
  else if (before === "absent") parts.push(verb("added the velesdb-hooks rules section", "add the velesdb-hooks rules section"));
  else parts.push(verb("updated the velesdb-hooks rules section in place", "update the velesdb-hooks rules section in place"));
  if (file.kind === "present") parts.push(`${verb("backup in", "back it up to")} ${where}.velesdb-backup`);
  if (file.kind === "present" && file.linked) parts.push(`${verb("written at", "write at")} the link's target ${shown(ctx, file.target)}`);
  out.line(`${name}: ${where}: ${parts.join("; ")}`);
  if (dryRun) return false;
  try {
    writeRegistry(file, text);
    return false;
  } catch (error) {
    out.problem(`${name}: could not write ${where} (${codeOf(error)})`);
    return true;
  }
}

/**
 * dshPluginRow(configPath) → the lines install prints for the harness config: the bridge
 * plugin pointed at our hooks.json by its absolute path (the bridge resolves a relative one
 * from whatever directory launched the harness). install never edits the harness config.
 */
export function dshPluginRow(configPath: string): string[] {
  return [
    "dsh: add this entry to the plugin list of the harness config (cordis.patch.yml); install does not edit that file:",
    "  - name: '@deepseek-ai/dsh-hooks-codex'",
    "    config:",
    `      configPath: ${yamlScalar(configPath)}`,
    "      model: deepseek-v4",
  ];
}

/** yamlScalar("/a b/it's") → `'/a b/it''s'`; a path of plain characters stays plain. */
export function yamlScalar(value: string): string {
  if (/^[A-Za-z0-9_\/.~+-][A-Za-z0-9_\/.~+@:=-]*$/.test(value) && !value.includes(": ")) return value;
  return `'${value.replaceAll("'", "''")}'`;
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
    else if (report.absent && counts && options.strict) repairs.push(installCommand(ctx, name));
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
  writeFully(2, text);
}
