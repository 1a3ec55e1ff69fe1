// Installer commands (docs/contract.md §9): install, uninstall, check, doctor. Loaded only by those
// commands (src/cli.ts imports this file lazily with a literal path), so no hook evaluates the
// JSONC, TOML or schema code used here. This file reads the command line and hands over:
// install and uninstall run the pipeline of pipeline.ts, check and doctor the reports of
// report.ts and doctor.ts. None of them knows a client by name; the clients are the table in
// clients/index.ts.
//
// A client that takes `--config PATH` (the dsh client's hooks.json lives where the user
// chooses, default ~/.dsh/velesdb-hooks.json) gets it resolved against the cwd once, here: the
// harness needs an absolute `configPath`, and so does every later check. `--config` is only
// taken together with that client (or `all`), so it can never silently redirect another one.
import * as path from "node:path";
import { diagnosticLine } from "../core/decision.ts";
import { resolveProjectIdentity } from "../core/identity.ts";
import { writeFully } from "../core/output.ts";
import { isDirectory } from "../core/state.ts";
import { inspectBinary, runningBinary } from "./binary.ts";
import { CLIENT_NAMES, CLIENTS, clientNamed, type ClientName, type InstallerClient } from "./clients/index.ts";
import { runDoctor } from "./check/doctor.ts";
import { acquireInstallerLock } from "./files/lock.ts";
import { installerContext, ourTree, shown, stableBinaryPath, type InstallerContext } from "./paths.ts";
import { resolveMcpSource, TCP_NOTE, type McpSource } from "./server/mcp-server.ts";
import { shownArgument } from "./server/mcp-url.ts";
import { EXIT_OK, EXIT_PROBLEM, install, refuse, uninstall } from "./pipeline.ts";
import { clientReport, installCommand, Output, reportTargets } from "./check/report.ts";
import { probeAll, probeIsOff, serverLines } from "./server/server-report.ts";
import { statsKeptLine } from "../stats/files.ts";

const EXIT_USAGE = 64;

export interface InstallerOptions {
  /** undefined: the command's default set (docs/contract.md §2). */
  readonly clients: readonly ClientName[] | undefined;
  readonly dryRun: boolean;
  readonly strict: boolean;
  /** `--config PATH` for the client that declares `configFile`, as typed (resolved against the cwd later). */
  readonly config?: string;
  /** install --mcp (a stdio server found via VELESDB_MEMORY_BIN or PATH) or --mcp-url URL. */
  readonly mcp?: { readonly url?: string };
}

type Parsed =
  | { readonly ok: true; readonly options: InstallerOptions }
  | { readonly ok: false; readonly problem: string };

const FLAGS: Readonly<Record<string, ReadonlySet<string>>> = {
  install: new Set(["--client", "--config", "--dry-run", "--mcp", "--mcp-url"]),
  uninstall: new Set(["--client", "--config", "--dry-run"]),
  check: new Set(["--client", "--config", "--strict"]),
  doctor: new Set(["--client", "--config"]),
};
const VALUE_FLAGS = ["--client", "--config", "--mcp-url"] as const;

/** clientChoices() → "claude, codex, … or all; --config: the DeepSeek harness hooks.json", for --help. */
export function clientChoices(): string {
  const configurable = CLIENTS.flatMap((client) =>
    client.configFile !== undefined ? [`; --config: ${client.configFile}`] : [],
  );
  return `${CLIENT_NAMES.join(", ")} or all${configurable.join("")}`;
}

/** parseInstallerArgs("check", ["--client", "codex", "--strict"]) → options, or the usage problem. */
export function parseInstallerArgs(command: string, args: readonly string[]): Parsed {
  const allowed = FLAGS[command];
  if (!allowed) return { ok: false, problem: `unknown command ${JSON.stringify(command)}` };
  let clients: ClientName[] | undefined;
  let dryRun = false;
  let strict = false;
  let config: string | undefined;
  let mcp: { url?: string } | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const valued = VALUE_FLAGS.find((f) => arg.startsWith(`${f}=`));
    const [flag, inline] = valued ? [valued, arg.slice(valued.length + 1)] : [arg, undefined];
    if (!allowed.has(flag))
      return {
        ok: false,
        problem: `${command} does not take ${shownArgument(arg)} (options: ${[...allowed].join(", ")})`,
      };
    if (flag === "--dry-run") dryRun = true;
    else if (flag === "--strict") strict = true;
    else if (flag === "--mcp") mcp = { ...mcp };
    else if (flag === "--mcp-url") {
      const value = inline ?? args[++i];
      if (value === undefined || value === "")
        return {
          ok: false,
          problem: "--mcp-url needs the URL of a running velesdb-memory daemon, such as https://127.0.0.1:18090/mcp",
        };
      mcp = { url: value };
    } else if (flag === "--config") {
      const value = inline ?? args[++i];
      if (value === undefined || value === "")
        return {
          ok: false,
          problem: `--config needs the path of ${CLIENTS.flatMap((c) => c.configFile ?? []).join(" or ")}`,
        };
      config = value;
    } else {
      const value = inline ?? args[++i];
      if (value === undefined || value === "")
        return { ok: false, problem: `--client needs a value: ${CLIENT_NAMES.join(", ")} or all` };
      if (value === "all") clients = [...CLIENT_NAMES];
      else if ((CLIENT_NAMES as readonly string[]).includes(value))
        clients = [...new Set([...(clients ?? []), value as ClientName])];
      else
        return {
          ok: false,
          problem: `unknown client ${shownArgument(value)} (clients: ${CLIENT_NAMES.join(", ")}, all)`,
        };
    }
  }
  const configurable = CLIENTS.filter((client) => client.configFile !== undefined);
  if (config !== undefined && !configurable.some((client) => clients?.includes(client.name))) {
    const names = configurable.map((client) => `--client ${client.name}`).join(" or ");
    return {
      ok: false,
      problem: `--config names ${configurable.map((client) => client.configFile).join(" or ")}: use it with ${names}`,
    };
  }
  return {
    ok: true,
    options: {
      clients,
      dryRun,
      strict,
      ...(config !== undefined ? { config } : {}),
      ...(mcp !== undefined ? { mcp } : {}),
    },
  };
}

export async function runInstallerCommand(command: string, args: readonly string[]): Promise<number> {
  const parsed = parseInstallerArgs(command, args);
  if (!parsed.ok) {
    writeFully(2, diagnosticLine(parsed.problem));
    return EXIT_USAGE;
  }
  const base = installerContext();
  const ctx: InstallerContext =
    parsed.options.config === undefined ? base : { ...base, configPath: path.resolve(base.cwd, parsed.options.config) };
  const out = new Output();
  // Every path the installer writes or registers derives from HOME; a relative one would
  // register commands that fail from any other directory (as relative CODEX_HOME would).
  if (!path.isAbsolute(ctx.home)) {
    out.problem(`refused: HOME is set to a relative path (${JSON.stringify(ctx.home)}); set it to an absolute path`);
    out.problem("nothing was changed");
    out.flush();
    return EXIT_PROBLEM;
  }
  const clients = selectedClients(ctx, parsed.options, command);
  let code: number;
  switch (command) {
    case "install":
    case "uninstall": {
      let mcp: McpSource | undefined;
      if (command === "install" && parsed.options.mcp) {
        const front = stableBinaryPath(ctx);
        const source = front.ok
          ? resolveMcpSource(ctx.env, parsed.options.mcp.url, ctx.platform === "win32" ? undefined : front.path)
          : front;
        if (!source.ok) {
          code = refuse(out, [source.problem]);
          break;
        }
        mcp = source.source;
        if (mcp.kind === "url") out.line(TCP_NOTE);
      }
      const pipelineOptions = {
        dryRun: parsed.options.dryRun,
        explicit: parsed.options.clients !== undefined,
        whileLocked: (run: () => number) => whileLocked(ctx, out, run),
        ...(mcp ? { mcp } : {}),
      };
      code = (command === "install" ? install : uninstall)(ctx, clients, pipelineOptions, out);
      // The stats records are the user's history: uninstall leaves them, and says where (docs/stats.md).
      const statsKept = command === "uninstall" ? statsKeptLine(ctx.env) : undefined;
      if (statsKept) out.line(statsKept);
      break;
    }
    case "check":
      code = await check(ctx, clients, parsed.options, out);
      break;
    default:
      code = await runDoctor(ctx, reportTargets(ctx, clients, parsed.options.clients !== undefined), out);
  }
  out.flush();
  return code;
}

/**
 * whileLocked(ctx, out, run) → run's exit code, run while this process holds the installer's
 * lock (lock.ts). The pipeline asks for it once it finds something to write; a live holder is waited for up to VELESDB_HOOKS_LOCK_WAIT seconds (default 60),
 * then the command stops with one line and exit 1, having changed nothing.
 */
function whileLocked(ctx: InstallerContext, out: Output, run: () => number): number {
  const tree = ourTree(ctx);
  if (!tree.ok) return run(); // The pipeline refuses it, naming the variable.
  const waitSeconds = Number(ctx.env.VELESDB_HOOKS_LOCK_WAIT ?? "");
  const waitMs =
    ctx.env.VELESDB_HOOKS_LOCK_WAIT !== undefined && Number.isFinite(waitSeconds) && waitSeconds >= 0
      ? waitSeconds * 1000
      : undefined;
  const locked = acquireInstallerLock(tree.path, waitMs, shown(ctx, tree.path));
  if (!locked.ok) {
    out.problem(`refused: ${locked.problem}`);
    out.problem("nothing was changed");
    return EXIT_PROBLEM;
  }
  try {
    return run();
  } finally {
    locked.lock.release();
  }
}

/** Clients a command acts on: --client, else install's detected ones (their directory exists), else all. */
function selectedClients(
  ctx: InstallerContext,
  options: InstallerOptions,
  command: string,
): readonly InstallerClient[] {
  if (options.clients) return options.clients.map(clientNamed);
  if (command !== "install") return CLIENTS;
  // A client whose home variable is unusable (a relative CODEX_HOME) is kept, so it is refused
  // out loud rather than skipped in silence.
  return CLIENTS.filter((client) => {
    const home = client.home(ctx);
    return !home.ok || isDirectory(home.path);
  });
}

async function check(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  options: InstallerOptions,
  out: Output,
): Promise<number> {
  const explicit = options.clients !== undefined;
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
  const reports = reportTargets(ctx, clients, explicit).map(({ ctx: targetCtx, client }) => ({
    targetCtx,
    client,
    report: clientReport(targetCtx, client, stableResolved.path, treeResolved.path, binary),
  }));
  // Every configured server is started once, all at once, before anything is printed.
  const probeOff = probeIsOff(ctx.env);
  const probed = probeOff
    ? []
    : await probeAll(
        ctx,
        reports.map(({ report }) => report.servers),
      );
  reports.forEach(({ targetCtx, client, report }, i) => {
    for (const line of report.lines) out.line(line);
    drift ||= report.drifted;
    if (probeOff) {
      if (report.servers.length > 0)
        out.line(`${client.name}: MCP server not started (VELESDB_HOOKS_SERVER_PROBE=off)`);
    } else {
      const servers = serverLines(client.name, report.servers, probed[i]!, "check");
      for (const line of servers.lines) out.line(line);
      drift ||= servers.drifted;
      repairs.push(...servers.repairs);
    }
    const counts = explicit || report.homeExists;
    if (report.absent && counts) absent = true;
    if (report.drifted) repairs.push(...report.repairs);
    else if (report.absent && counts && options.strict) repairs.push(installCommand(targetCtx, client));
  });
  // The repository check runs in: a config the hooks ignore (a project or session velesdb-memory
  // refuses to save under, bad JSON) silently turns its learning loop off.
  const identity = resolveProjectIdentity(ctx.cwd);
  if (identity.configProblem !== "") {
    const where = shown(ctx, identity.configPath);
    out.line(`config: ${where} ${identity.configProblem}: ignored, defaults apply (learning loop off)`);
    drift = true;
    repairs.push(`fix ${where}`);
  }
  for (const repair of [...new Set(repairs)]) out.line(`repair: ${repair}`);
  return drift || (options.strict && absent) ? EXIT_PROBLEM : EXIT_OK;
}
