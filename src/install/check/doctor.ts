// `velesdb-hooks doctor` (docs/contract.md §9): one screen a user can paste into an issue. It answers the
// questions behind "my hook never fires": is the binary where the entries point, is each
// entry in step (and, for Windsurf, the rules section), has Codex been told to trust them,
// can the compiler compress, is the daemon current, is the state directory usable, which
// project config applies here, and does the login shell print on start (those bytes land in
// front of a hook's JSON answer and the host then ignores the whole answer). Paths under the
// home directory are shown as `~/…`. It changes nothing the hooks rely on; its only write is
// the freshness cache of docs/contract.md §5.1.
import * as fs from "node:fs";
import * as path from "node:path";
import { freshnessReport } from "../../core/freshness.ts";
import { CONFIG_FILE_NAME, resolveProjectIdentity } from "../../core/identity.ts";
import { defaultStateDirectory } from "../../core/state.ts";
import { humanBytes, statsLocationLine } from "../../stats/files.ts";
import { VERSION } from "../../version.ts";
import { inspectBinary, runningBinary } from "../binary.ts";
import { probeCompilerNow } from "./compiler-probe.ts";
import { clientReport, type Output, type ReportTarget } from "./report.ts";
import { ourTree, quoted, shown, stableBinaryPath, type InstallerContext } from "../paths.ts";
import type { RowState } from "../entries/owned-entries.ts";
import { embedderNote, probeAll, probeIsOff, serverLines } from "../server/server-report.ts";

const SHELL_TIMEOUT_MS = 5000;

export async function runDoctor(ctx: InstallerContext, targets: readonly ReportTarget[], out: Output): Promise<number> {
  const running = runningBinary();
  const stable = stableBinaryPath(ctx);
  const tree = ourTree(ctx);
  const binary = stable.ok && tree.ok ? inspectBinary(stable.path, running) : undefined;
  const reports =
    binary && stable.ok && tree.ok
      ? targets.map(({ ctx: targetCtx, client }) => ({
          client,
          report: clientReport(targetCtx, client, stable.path, tree.path, binary),
        }))
      : [];
  const probeOff = probeIsOff(ctx.env);
  // Slow probes first, concurrently: the compiler (up to its probe timeout), the daemon
  // (1 s + 2 s), the login shell (5 s) and every configured MCP server (5 s).
  const [compiler, freshness, shell, probed] = await Promise.all([
    probeCompilerNow(ctx.env),
    (ctx.env.VELESDB_HOOK_FRESHNESS ?? "").toLowerCase() === "off"
      ? Promise.resolve(undefined)
      : freshnessReport(ctx.env),
    loginShellNoise(ctx),
    probeOff
      ? Promise.resolve([])
      : probeAll(
          ctx,
          reports.map(({ report }) => report.servers),
        ),
  ]);

  out.line(`velesdb-hooks doctor`);
  out.line(`version:   ${VERSION}${running.ok ? ` (running ${shown(ctx, running.path)})` : " (running from source)"}`);
  if (!binary || !stable.ok) {
    out.line(`binary:    cannot be located: ${stable.ok ? "velesdb-hooks' directory is unusable" : stable.problem}`);
  } else {
    const state =
      binary.state === "drifted" || binary.state === "blocked" ? `drifted: ${binary.problem}` : binary.state;
    out.line(`binary:    ${state} (${shown(ctx, stable.path)})`);
    reports.forEach(({ client, report }, i) => {
      const name = client.name;
      const servers = probeOff
        ? {
            lines:
              report.servers.length > 0 ? [`${name}: MCP server not started (VELESDB_HOOKS_SERVER_PROBE=off)`] : [],
          }
        : serverLines(name, report.servers, probed[i]!, "doctor");
      for (const line of [...report.lines.filter((l) => !l.startsWith(`${name}: binary `)), ...servers.lines])
        out.line(`${pad(`${name}:`)}${line.slice(name.length + 2)}`);
      // Per entry, once the registry holds any of ours: which event is in step and which is not.
      if (report.verdict && report.verdict.state !== "absent") {
        for (const { row, state } of report.verdict.rows)
          out.line(`${pad(`${name}:`)}  ${row.wireEvent} ${entryState(state)}`);
      }
      for (const { label, text } of report.doctor) out.line(`${pad(label)}${text}`);
    });
    const note = embedderNote(probed.flat());
    if (note) out.line(`memory:    ${note}`);
  }

  if (compiler.state === "missing")
    out.line(`compiler:  missing: ${compiler.problem} (PostToolUse compression stays off)`);
  else if (compiler.state === "capable")
    out.line(`compiler:  capable: ${shown(ctx, compiler.path)} answered compile-stdin in ${compiler.elapsedMs} ms`);
  else
    out.line(
      `compiler:  not capable: ${shown(ctx, compiler.path)} ${compiler.problem} (PostToolUse compression stays off)`,
    );

  if (!freshness) out.line("daemon:    freshness check off (VELESDB_HOOK_FRESHNESS=off)");
  else if (freshness.running === undefined) out.line(`daemon:    no velesdb-memory answered at ${freshness.url}`);
  else {
    const latest =
      freshness.latest === undefined
        ? "latest published version unknown"
        : freshness.line !== ""
          ? `latest published ${freshness.latest}: an upgrade is available`
          : `latest published ${freshness.latest}: up to date`;
    out.line(`daemon:    velesdb-memory ${freshness.running} at ${freshness.url}; ${latest}`);
  }

  out.line(`state:     ${stateDirectoryReport(ctx)}`);
  out.line(`stats:     ${statsLocationLine(ctx.env)}`);
  out.line(`config:    ${projectConfigReport(ctx)}`);
  out.line(`shell:     ${shell}`);
  return 0;
}

const pad = (label: string): string => label.padEnd(11);

/** entryState("legacy") → "runs the bash hooks": doctor's words for one row's state. */
function entryState(state: RowState): string {
  switch (state) {
    case "in step":
      return "in step";
    case "missing":
      return "missing";
    case "differs":
      return "differs from what install writes";
    case "duplicated":
      return "registered more than once";
    case "legacy":
      return "runs the bash hooks";
    default:
      return state satisfies never;
  }
}

/** stateDirectoryReport → healthy (files, size, archived outputs), absent, or why hooks will not use it. */
function stateDirectoryReport(ctx: InstallerContext): string {
  const dir = defaultStateDirectory(ctx.env);
  const where = shown(ctx, dir);
  if (!path.isAbsolute(dir)) return `unsafe: ${where} is not an absolute path (hooks keep no state)`;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return `${where} does not exist yet (hooks create it, mode 700)`;
  }
  if (st.isSymbolicLink()) return `unsafe: ${where} is a symlink (hooks keep no state)`;
  if (!st.isDirectory()) return `unsafe: ${where} is not a directory (hooks keep no state)`;
  if (process.platform !== "win32") {
    const uid = typeof process.getuid === "function" ? process.getuid() : -1;
    if (st.uid !== uid) return `unsafe: ${where} is owned by another user (hooks keep no state)`;
    if ((st.mode & 0o777) !== 0o700)
      return `unsafe: ${where} has mode ${(st.mode & 0o777).toString(8)}, not 700 (hooks keep no state)`;
  }
  const all = treeSize(dir);
  const archived = treeSize(path.join(dir, "tool-output"));
  return `healthy: ${where}, ${all.files} ${all.files === 1 ? "file" : "files"}, ${humanBytes(all.bytes)} (archived tool outputs: ${humanBytes(archived.bytes)}; nothing is deleted automatically)`;
}

function treeSize(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const p = path.join(dir, name);
      try {
        const st = fs.lstatSync(p);
        if (st.isDirectory()) stack.push(p);
        else {
          files++;
          bytes += st.size;
        }
      } catch {
        // Vanished while walking.
      }
    }
  }
  return { files, bytes };
}

/**
 * projectConfigReport: the project, session and paths come from the repository (its
 * `.velesdb-hooks.json`, its directory names), so each is printed as a JSON string with every
 * control character escaped — a repository must not reach the user's terminal with escapes.
 */
function projectConfigReport(ctx: InstallerContext): string {
  const identity = resolveProjectIdentity(ctx.cwd);
  const slot = `project ${quoted(identity.project)}, session ${quoted(identity.session)}`;
  if (identity.configPath === "")
    return `no ${CONFIG_FILE_NAME} above ${shown(ctx, identity.start)}: defaults apply (${slot}, learning loop off)`;
  const where = shown(ctx, identity.configPath);
  if (identity.configProblem !== "")
    return `${where} ${identity.configProblem}: ignored, defaults apply (${slot}, learning loop off)`;
  return `${where} parsed (${slot}, learning loop ${identity.enforceLearningLoop ? "enforced" : "off"})`;
}

/**
 * loginShellNoise → whether `$SHELL -l -c true` prints anything (Codex runs hooks through the
 * session shell). A login profile may start anything: the probe runs in its own process group,
 * the whole group is killed at the limit, and the answer never waits on the pipe after that —
 * a background child that inherited stdout keeps it open long after the shell is gone (it made
 * doctor take 30 s, and `sleep 45` in a profile 45 s, while it claimed a 5 s limit).
 */
async function loginShellNoise(ctx: InstallerContext): Promise<string> {
  if (ctx.platform === "win32") return "not checked on Windows";
  const shell = ctx.env.SHELL && path.isAbsolute(ctx.env.SHELL) ? ctx.env.SHELL : "/bin/sh";
  let child: ReturnType<typeof Bun.spawn<"ignore", "pipe", "ignore">>;
  try {
    child = Bun.spawn([shell, "-l", "-c", "true"], {
      env: ctx.env as Record<string, string>,
      cwd: ctx.home,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
      detached: true,
    });
  } catch {
    return `${shell} could not be started`;
  }
  const reader = child.stdout.getReader();
  let printed = 0;
  const finished = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      printed += chunk.value.byteLength;
    }
    await child.exited;
    return "finished" as const;
  })().catch(() => "finished" as const);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<"limit">((resolve) => {
    timer = setTimeout(() => resolve("limit"), SHELL_TIMEOUT_MS);
  });
  const outcome = await Promise.race([finished, limit]);
  clearTimeout(timer);
  // Whatever the profile left in the group goes now, the shell's own children included.
  killGroup(child.pid);
  if (outcome === "limit") {
    void reader.cancel().catch(() => {});
    const shellGone = child.exitCode !== null;
    const why = shellGone ? ": a process it started in the background kept its output open" : "";
    return `${shell} -l did not finish within ${SHELL_TIMEOUT_MS / 1000} s${why} (a hook run through this shell would hang the same way)`;
  }
  if (printed === 0) return `${shell} -l prints nothing on start`;
  return `${shell} -l prints ${printed} bytes on start: a hook run through this shell gets them in front of its answer, and the host then ignores the answer (move that output to an interactive-only file such as ~/.bashrc or ~/.zshrc)`;
}

/** killGroup(pid): SIGKILL to the process group the detached probe leads; an empty group is fine. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: nothing is left in the group.
  }
}
