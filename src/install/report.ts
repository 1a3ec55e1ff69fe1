// What check and doctor say about one client, and the output buffer every installer command
// writes through (stdout for the report, stderr for refusals, each written once at the end).
import { diagnosticLine } from "../core/decision.ts";
import { writeFully } from "../core/output.ts";
import { isDirectory } from "../core/state.ts";
import type { BinaryState } from "./binary.ts";
import { CLIENTS, windsurfRulesPath } from "./clients.ts";
import { configTomlEntries, readCodexConfig, trustOf, type EntryTrust } from "./codex-trust.ts";
import { shown, type InstallerContext } from "./paths.ts";
import { posixQuote } from "./shell-words.ts";
import type { ClientName } from "./registrations.ts";
import { judgeRegistry, readRegistry, type RegistryVerdict } from "./registry.ts";
import { readRulesFile, rulesState, type RulesState } from "./rules.ts";

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
  readonly trust: EntryTrust[];
  /** Windsurf's rules section: its state, or "unreadable" (refused file, broken markers). */
  readonly rules?: RulesState | "unreadable";
}

/** clientReport → the check lines for one client: its binary, its registry, (Windsurf) the rules section and (Codex) config.toml. */
export function clientReport(ctx: InstallerContext, name: ClientName, stable: string, tree: string, binary: BinaryState): ClientReport {
  const client = CLIENTS[name];
  const lines: string[] = [];
  const repairs: string[] = [];
  const trust: EntryTrust[] = [];
  const home = client.clientHome(ctx);
  const homeExists = home.ok && isDirectory(home.path);
  const registryPath = client.registryPath(ctx);
  if (!registryPath.ok) {
    lines.push(`${name}: entries cannot be checked: ${registryPath.problem}`);
    return { lines, drifted: true, absent: false, homeExists, repairs: [`fix the environment, then ${installCommand(ctx, name)}`], verdict: undefined, registryPath: undefined, trust };
  }
  const where = shown(ctx, registryPath.path);
  const file = readRegistry(registryPath.path, tree);
  let verdict: RegistryVerdict | undefined;
  let drifted = false;
  let registryAbsent = false;
  if (file.kind === "refused") {
    lines.push(`${name}: entries cannot be checked: ${where} ${file.problem}`);
    repairs.push(`fix ${where}, then ${installCommand(ctx, name)}`);
    drifted = true;
  } else {
    verdict = judgeRegistry(file.kind === "present" ? file.hooks : undefined, client, stable, ctx.platform);
    registryAbsent = verdict.state === "absent";
    drifted = verdict.state === "drifted";
    const detail = verdict.state === "drifted" ? `: ${driftDetails(verdict)}` : "";
    lines.push(`${name}: entries ${verdict.state} (${where}${file.kind === "absent" ? ", no such file" : ""})${detail}`);
    if (drifted) repairs.push(installCommand(ctx, name));
  }
  let rules: RulesState | "unreadable" | undefined;
  if (name === "windsurf") {
    const judged = windsurfRulesReport(ctx, tree);
    rules = judged.state;
    lines.push(judged.line);
    // One artefact without the other is drift: entries with no rules section guard edits the
    // model was never told about; a rules section with no entries describes hooks that never run.
    const registryHere = !registryAbsent || file.kind === "refused";
    const rulesHere = rules !== "absent";
    if (rules === "unreadable" || rules === "outdated" || (!drifted && registryHere !== rulesHere)) {
      drifted = true;
      repairs.push(judged.repair);
    }
  }
  // The binary matters to a client only once entries name it.
  const binaryMatters = file.kind === "refused" || !registryAbsent;
  const binaryLine = binaryState(binary);
  lines.push(`${name}: binary ${binaryLine} (${shown(ctx, stable)})`);
  if (binaryMatters && binary.state !== "in step") {
    drifted = true;
    repairs.push(installCommand(ctx, name));
  }
  if (name === "codex" && home.ok) {
    const config = readCodexConfig(home.path);
    if (config.kind === "unreadable") lines.push(`codex: ${shown(ctx, config.path)} ${config.problem}; its [hooks] tables were not checked`);
    const inToml = configTomlEntries(config, stable);
    if (inToml.length > 0) {
      drifted = true;
      lines.push(
        `codex: velesdb-hooks entries also in ${shown(ctx, config.path)} [hooks] (${inToml.map((e) => e.event).join(", ")}); Codex runs those as well`,
      );
      repairs.push(`remove the velesdb-hooks entries from ${shown(ctx, config.path)} [hooks], then velesdb-hooks check --client codex`);
    }
    if (verdict) trust.push(...trustOf(verdict.owned, registryPath.path, config, ctx.platform));
    trust.push(...trustOf(inToml, config.path, config, ctx.platform));
  }
  const absent = !drifted && (registryAbsent || binary.state === "absent");
  return { lines, drifted, absent, homeExists, repairs, verdict, registryPath: registryPath.path, trust, ...(rules ? { rules } : {}) };
}

/** installCommand(ctx, "dsh") → the install command for that client, with the --config this command was given. */
export function installCommand(ctx: InstallerContext, name: ClientName): string {
  const config = name === "dsh" && ctx.dshConfig !== undefined ? ` --config ${posixQuote(ctx.dshConfig)}` : "";
  return `velesdb-hooks install --client ${name}${config}`;
}

/** windsurfRulesReport → the rules section's state, its check line and the command that repairs it. */
function windsurfRulesReport(ctx: InstallerContext, tree: string): { state: RulesState | "unreadable"; line: string; repair: string } {
  const rulesPath = windsurfRulesPath(ctx);
  const where = shown(ctx, rulesPath);
  const file = readRulesFile(rulesPath, tree);
  if (file.kind === "refused") {
    return { state: "unreadable", line: `windsurf: rules section cannot be checked: ${where} ${file.problem}`, repair: `fix ${where}, then velesdb-hooks install --client windsurf` };
  }
  const judged = rulesState(file.kind === "present" ? file.text : "");
  if (!judged.ok) {
    return { state: "unreadable", line: `windsurf: rules section cannot be checked: ${where} ${judged.problem}`, repair: `fix ${where}, then velesdb-hooks install --client windsurf` };
  }
  const line =
    judged.state === "outdated"
      ? `windsurf: rules section drifted (${where}): its text differs from this version's`
      : `windsurf: rules section ${judged.state} (${where}${file.kind === "absent" ? ", no such file" : ""})`;
  return {
    state: judged.state,
    line,
    repair: "velesdb-hooks install --client windsurf",
  };
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
    parts.push(`${event} holds an entry of ours (not an event velesdb-hooks uses)`);
  }
  return parts.join("; ");
}



