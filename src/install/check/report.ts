// What check and doctor say about one client, and the output buffer every installer command
// writes through (stdout for the report, stderr for refusals, each written once at the end).
import * as path from "node:path";
import { diagnosticLine } from "../../core/decision.ts";
import { writeFully } from "../../core/output.ts";
import { isDirectory } from "../../core/state.ts";
import type { BinaryState } from "../binary.ts";
import { primaryPath, type InstallerClient, type SectionSpec } from "../client.ts";
import { clientFiles, reachFor } from "../files/foreign-home.ts";
import { readManifest } from "../steps/manifest.ts";
import { mcpReport, type ServerTarget } from "../server/mcp-check.ts";
import { ourTree, printable, shown, type InstallerContext } from "../paths.ts";
import { posixQuote } from "../entries/shell-words.ts";
import { judgeRegistry, type RegistryVerdict } from "../entries/owned-entries.ts";
import { readRegistry } from "../entries/registry-file.ts";
import { readRulesFile, rulesState, type RulesState } from "../entries/rules.ts";

/** Collects stdout lines and stderr lines; written once at the end. */
export class Output {
  private readonly stdout: string[] = [];
  private readonly stderr: string[] = [];
  line(text = ""): void {
    this.stdout.push(text);
  }
  problem(text: string): void {
    this.stderr.push(diagnosticLine(text));
  }
  flush(): void {
    if (this.stdout.length > 0) writeFully(1, `${this.stdout.join("\n")}\n`);
    if (this.stderr.length > 0) writeFully(2, this.stderr.join(""));
  }
}

export interface ClientReport {
  readonly lines: string[];
  readonly drifted: boolean;
  readonly absent: boolean;
  readonly homeExists: boolean;
  readonly repairs: string[];
  readonly verdict: RegistryVerdict | undefined;
  readonly registryPath: string | undefined;
  /** Lines only doctor shows (the client's own checks, e.g. Codex trust), with their left-column label. */
  readonly doctor: ReadonlyArray<{ readonly label: string; readonly text: string }>;
  /** The configured servers to start (server-report.ts); the probe's lines follow `lines`. */
  readonly servers: readonly ServerTarget[];
}

/** clientReport → the check lines for one client: its registry, its sections, the binary and the client's own checks. */
export function clientReport(
  ctx: InstallerContext,
  client: InstallerClient,
  stable: string,
  tree: string,
  binary: BinaryState,
): ClientReport {
  const name = client.name;
  const home = client.home(ctx);
  const homeExists = home.ok && isDirectory(home.path);
  const registryPath = primaryPath(client, ctx);
  if (!registryPath.ok)
    return uncheckable(
      `${name}: entries cannot be checked: ${registryPath.problem}`,
      `fix the environment, then ${installCommand(ctx, client)}`,
      homeExists,
      undefined,
    );
  // Root checking another user's home reads nothing through a link that user could aim at root's files.
  const reach = reachFor(ctx);
  const unreachable = clientFiles(ctx, client, registryPath.path).find((p) => reach(p) !== undefined);
  if (unreachable !== undefined) {
    const at = shown(ctx, unreachable);
    return uncheckable(
      `${name}: entries cannot be checked: ${at} ${reach(unreachable)}`,
      `fix ${at}, then ${installCommand(ctx, client)}`,
      homeExists,
      registryPath.path,
    );
  }
  const registry = registryReport(ctx, client, registryPath.path, tree, stable);
  const lines = [...registry.lines];
  const repairs = [...registry.repairs];
  let drifted = registry.drifted;
  let sectionsHere = false;
  for (const section of client.sections ?? []) {
    const judged = sectionReport(ctx, client, section, tree, stable);
    lines.push(judged.line);
    sectionsHere ||= judged.state !== "absent";
    const broken = judged.state === "unreadable" || judged.state === "outdated";
    // One artefact without the other is drift: entries with no rules section guard edits the
    // model was never told about; a rules section with no entries describes hooks that never run.
    const halfThere = client.registry !== undefined && !drifted && registry.absent !== (judged.state === "absent");
    if (broken || halfThere) {
      drifted = true;
      repairs.push(judged.repair);
    }
  }
  // The binary matters to a client only once entries name it.
  const binaryMatters = !registry.absent || (!client.registry && sectionsHere);
  lines.push(`${name}: binary ${binaryState(binary)} (${shown(ctx, stable)})`);
  if (binaryMatters && binary.state !== "in step") {
    drifted = true;
    repairs.push(installCommand(ctx, client));
  }
  const extra = client.report?.(ctx, {
    registryPath: registryPath.path,
    owned: registry.verdict?.owned ?? [],
    stable,
  });
  if (extra) {
    lines.push(...extra.lines);
    repairs.push(...extra.repairs);
    drifted ||= extra.drifted;
  }
  // The server the hooks send the agent to (docs/mcp-server.md): hooks without it lock opted-in edits.
  const hooksHere = client.registry ? !registry.absent && !registry.refused : sectionsHere;
  const server = mcpReport(ctx, client, tree, hooksHere);
  lines.push(...server.lines);
  repairs.push(...server.repairs);
  drifted ||= server.drifted;
  const absent = !drifted && ((client.registry ? registry.absent : !sectionsHere) || binary.state === "absent");
  return {
    lines,
    drifted,
    absent,
    homeExists,
    repairs,
    verdict: registry.verdict,
    registryPath: registryPath.path,
    doctor: extra?.doctor ?? [],
    servers: server.servers,
  };
}

/** uncheckable(line, repair, …) → the report of a client whose files cannot be read at all: drift, with one repair. */
function uncheckable(
  line: string,
  repair: string,
  homeExists: boolean,
  registryPath: string | undefined,
): ClientReport {
  return {
    lines: [line],
    drifted: true,
    absent: false,
    homeExists,
    repairs: [repair],
    verdict: undefined,
    registryPath,
    doctor: [],
    servers: [],
  };
}

/** What the registry's check found (registryReport). */
interface RegistryCheck {
  readonly lines: readonly string[];
  readonly repairs: readonly string[];
  readonly drifted: boolean;
  readonly verdict: RegistryVerdict | undefined;
  /**
   * No entries of ours are there (a client without a registry has none: it is judged by its
   * sections). A refused file is not absent: its entries may be there, so a rules section beside
   * it is not drift and the binary matters.
   */
  readonly absent: boolean;
  /** The registry could not be read safely. */
  readonly refused: boolean;
}

/** registryReport → the registry's line: entries in step, drifted (and how), absent, or the file refused. */
function registryReport(
  ctx: InstallerContext,
  client: InstallerClient,
  registryPath: string,
  tree: string,
  stable: string,
): RegistryCheck {
  // A client without a registry is judged by its sections alone (OpenCode's plugin file).
  if (client.registry === undefined)
    return { lines: [], repairs: [], drifted: false, verdict: undefined, absent: true, refused: false };
  const where = shown(ctx, registryPath);
  const file = readRegistry(registryPath, tree, client.registry.skeleton);
  if (file.kind === "refused")
    return {
      lines: [`${client.name}: entries cannot be checked: ${where} ${file.problem}`],
      repairs: [`fix ${where}, then ${installCommand(ctx, client)}`],
      drifted: true,
      verdict: undefined,
      absent: false,
      refused: true,
    };
  const verdict = judgeRegistry(
    file.kind === "present" ? file.hooks : undefined,
    client.registry,
    stable,
    ctx.platform,
  );
  const drifted = verdict.state === "drifted";
  const detail = drifted ? `: ${driftDetails(verdict)}` : "";
  return {
    lines: [
      `${client.name}: entries ${verdict.state} (${where}${file.kind === "absent" ? ", no such file" : ""})${detail}`,
    ],
    repairs: drifted ? [installCommand(ctx, client)] : [],
    drifted,
    verdict,
    absent: verdict.state === "absent",
    refused: false,
  };
}

/** A client to report on, with the context to read it in (a remembered `--config` file gets its own). */
export interface ReportTarget {
  readonly ctx: InstallerContext;
  readonly client: InstallerClient;
}

/**
 * reportTargets(ctx, clients, explicit) → the clients to check, plus (without --client) each
 * registry at a path of the user's choosing (`--config`) that install remembers, so a custom
 * dsh file is checked without repeating its flag.
 */
export function reportTargets(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  explicit: boolean,
): ReportTarget[] {
  const targets: ReportTarget[] = clients.map((client) => ({ ctx, client }));
  const tree = ourTree(ctx);
  if (explicit || !tree.ok) return targets;
  const manifest = readManifest(tree.path);
  if (!manifest.ok) return targets;
  for (const record of manifest.records) {
    if (record.kind === "mcp") continue;
    const client = clients.find((c) => c.name === record.client && c.configFile !== undefined);
    const current = client?.registry?.path(ctx);
    if (!client || !current?.ok || path.resolve(current.path) === path.resolve(record.path)) continue;
    targets.push({ ctx: { ...ctx, configPath: record.path }, client });
  }
  return targets;
}

/** installCommand(ctx, client) → the install command for that client, with the --config this command was given. */
export function installCommand(ctx: InstallerContext, client: InstallerClient): string {
  const config =
    client.configFile !== undefined && ctx.configPath !== undefined ? ` --config ${posixQuote(ctx.configPath)}` : "";
  return `velesdb-hooks install --client ${client.name}${config}`;
}

/** sectionReport → a section's state, its check line and the command that repairs it. */
function sectionReport(
  ctx: InstallerContext,
  client: InstallerClient,
  section: SectionSpec,
  tree: string,
  stable: string,
): { state: RulesState | "unreadable"; line: string; repair: string } {
  const sectionPath = section.path(ctx);
  const where = shown(ctx, sectionPath);
  const name = client.name;
  const repair = installCommand(ctx, client);
  const file = readRulesFile(sectionPath, tree);
  const judged =
    file.kind === "refused"
      ? { ok: false as const, problem: file.problem }
      : rulesState(section, file.kind === "present" ? file.text : "", stable);
  if (!judged.ok) {
    return {
      state: "unreadable",
      line: `${name}: ${section.label} cannot be checked: ${where} ${judged.problem}`,
      repair: `fix ${where}, then ${repair}`,
    };
  }
  const line =
    judged.state === "outdated"
      ? `${name}: ${section.label} drifted (${where}): its text differs from this version's`
      : `${name}: ${section.label} ${judged.state} (${where}${file.kind === "absent" ? ", no such file" : ""})`;
  return { state: judged.state, line, repair };
}

function binaryState(binary: BinaryState): string {
  return binary.state === "drifted" || binary.state === "blocked" ? `drifted: ${binary.problem}` : binary.state;
}

/** driftDetails(verdict) → "Stop differs; PreCompact missing; Notification holds an entry of ours (not an event velesdb-hooks uses)". */
export function driftDetails(verdict: RegistryVerdict): string {
  const parts: string[] = [];
  for (const { row, state } of verdict.rows) {
    if (state === "missing") parts.push(`${row.wireEvent} missing`);
    else if (state === "differs") parts.push(`${row.wireEvent} differs`);
    else if (state === "duplicated") parts.push(`${row.wireEvent} registered more than once`);
    else if (state === "legacy") parts.push(`${row.wireEvent} still runs the bash hooks`);
  }
  for (const event of [...new Set(verdict.unexpected.map((entry) => entry.event))]) {
    parts.push(`${printable(event)} holds an entry of ours (not an event velesdb-hooks uses)`);
  }
  return parts.join("; ");
}
