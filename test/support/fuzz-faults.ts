// Fault injection for test/faults.test.ts: the probes each failure-table column runs, the checks
// of each expected answer, fake compilers that die mid-answer or flood stdout, and a runner that
// executes a row's probes inside a private mount namespace (`unshare -m`) where the state
// directory sits on a full or read-only tmpfs. Nothing is mounted outside that namespace.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { markerPath, repositoryIdentity } from "../../src/core/state.ts";
import { entryById, judgeAnswer, type Judged, type RawAnswer } from "./fuzz-entries.ts";
import type { Column, Expect } from "./failure-table.ts";
import { BINARY, FIXTURES, loadPayload } from "./hook-runner.ts";
import type { FuzzSandbox } from "./fuzz-sandbox.ts";
import { checkpointTargets } from "./learning.ts";

export type Host = "claude" | "codex" | "windsurf" | "dsh" | "gemini";

export interface Probe {
  readonly host: Host;
  readonly event: string;
  /** The payload object, or raw stdin text. */
  readonly stdin: Record<string, unknown> | string;
  /** The process cwd. */
  readonly cwd: string;
  /** What this probe stands for in its column's check. */
  readonly role: "main" | "guarded" | "unguarded" | "first-stop" | "next-stop" | "bash" | "recall";
  /** A Stop whose cwd is the opted-in repository (state failures are told only there). */
  readonly optedIn?: boolean;
}

export interface ProbeRun {
  readonly probe: Probe;
  readonly raw: RawAnswer;
  readonly elapsedMs: number;
}

/** The session every probe of a row uses. */
export const faultSession = (rowId: string): string => `fault-${rowId}`;

const BIG_LOG = `${Array.from({ length: 1500 }, (_, i) => `   Compiling crate-${i % 40} v0.${i % 9}.0 (registry)`).join("\n")}\nerror: linking failed\n`;

/** columnProbes(column, box, session) → the hook calls that show what a column answers. */
export function columnProbes(column: Column, box: FuzzSandbox, session: string): Probe[] {
  const repo = fs.realpathSync(box.repo);
  switch (column) {
    case "lifecycle":
      return [
        {
          host: "claude",
          event: "session-start",
          stdin: loadPayload("claude", "session-start.compact", { session_id: session, cwd: box.plain }),
          cwd: box.plain,
          role: "main",
        },
        {
          host: "codex",
          event: "session-start",
          stdin: loadPayload("codex", "session-start.startup", { session_id: session, cwd: box.plain }),
          cwd: box.plain,
          role: "main",
        },
        {
          host: "dsh",
          event: "session-start",
          stdin: loadPayload("dsh", "session-start.startup", {
            session_id: session,
            cwd: box.plain,
            source: "compact",
          }),
          cwd: box.plain,
          role: "main",
        },
        {
          host: "windsurf",
          event: "pre-user-prompt",
          stdin: loadPayload("windsurf", "pre-user-prompt", { trajectory_id: session }),
          cwd: box.plain,
          role: "main",
        },
        {
          host: "gemini",
          event: "session-start",
          stdin: loadPayload("gemini", "session-start.startup", { session_id: session, cwd: box.plain }),
          cwd: box.plain,
          role: "main",
        },
      ];
    case "precompact":
      return [
        {
          host: "claude",
          event: "pre-compact",
          stdin: loadPayload("claude", "pre-compact.auto", { session_id: session, cwd: box.plain }),
          cwd: box.plain,
          role: "main",
        },
      ];
    case "stop":
      return (["claude", "codex", "dsh", "gemini"] as const).flatMap((host) => {
        const fixture = host === "dsh" ? "stop" : host === "gemini" ? "after-agent.first" : "stop.first";
        const event = host === "gemini" ? "after-agent" : "stop";
        // Claude and Codex set stop_hook_active on the Stop after a continuation; the bridge never does.
        const next = host !== "dsh";
        // A plain workspace, then the opted-in repository (its own continuation chain).
        return [box.plain, box.repo].flatMap((cwd) => {
          const optedIn = cwd === box.repo;
          return [
            {
              host,
              event,
              stdin: loadPayload(host, fixture, { session_id: session, cwd, stop_hook_active: false }),
              cwd,
              role: "first-stop" as const,
              optedIn,
            },
            {
              host,
              event,
              stdin: loadPayload(host, fixture, { session_id: session, cwd, stop_hook_active: next }),
              cwd,
              role: "next-stop" as const,
              optedIn,
            },
          ];
        });
      });
    case "guard": {
      const edit = (host: Host, dir: string, role: "guarded" | "unguarded"): Probe => {
        const target = path.join(dir, "src", "edited.ts");
        if (host === "claude")
          return {
            host,
            event: "pre-tool-use",
            stdin: loadPayload("claude", "pre-tool-use.write", {
              session_id: session,
              cwd: box.plain,
              tool_input: { file_path: target, content: "x\n" },
            }),
            cwd: box.plain,
            role,
          };
        if (host === "codex") {
          const command = `*** Begin Patch\n*** Update File: ${target}\n@@\n-a\n+b\n*** End Patch`;
          return {
            host,
            event: "pre-tool-use",
            stdin: loadPayload("codex", "pre-tool-use.apply-patch", {
              session_id: session,
              cwd: box.plain,
              tool_input: { command },
            }),
            cwd: box.plain,
            role,
          };
        }
        if (host === "gemini") {
          return {
            host,
            event: "before-tool",
            stdin: loadPayload("gemini", "before-tool.write-file", {
              session_id: session,
              cwd: box.plain,
              tool_input: { file_path: target, content: "x\n" },
            }),
            cwd: box.plain,
            role,
          };
        }
        if (host === "windsurf") {
          return {
            host,
            event: "pre-write-code",
            stdin: loadPayload("windsurf", "pre-write-code", {
              trajectory_id: session,
              tool_info: { file_path: target, edits: [] },
            }),
            cwd: box.plain,
            role,
          };
        }
        // The DeepSeek bridge names no target: the session cwd decides.
        return {
          host,
          event: "pre-tool-use",
          stdin: loadPayload("dsh", "pre-tool-use.edit", { session_id: session, cwd: dir }),
          cwd: dir,
          role,
        };
      };
      return (["claude", "codex", "windsurf", "dsh", "gemini"] as const).flatMap((host) => [
        edit(host, repo, "guarded"),
        edit(host, box.plain, "unguarded"),
      ]);
    }
    case "posttooluse":
      return [
        {
          host: "claude",
          event: "post-tool-use",
          stdin: loadPayload("claude", "post-tool-use.bash-small", {
            session_id: session,
            cwd: box.plain,
            tool_response: { stdout: BIG_LOG, stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
          }),
          cwd: box.plain,
          role: "bash",
        },
        {
          host: "claude",
          event: "post-tool-use",
          stdin: loadPayload("claude", "post-tool-use.recall-fused", {
            session_id: session,
            cwd: repo,
            tool_input: { query: "q" },
          }),
          cwd: box.plain,
          role: "recall",
        },
        {
          host: "codex",
          event: "post-tool-use",
          stdin: loadPayload("codex", "post-tool-use.recall-fused", {
            session_id: session,
            cwd: repo,
            tool_input: { query: "q" },
          }),
          cwd: box.plain,
          role: "recall",
        },
        {
          host: "dsh",
          event: "post-tool-use",
          stdin: loadPayload("dsh", "post-tool-use.recall-fused", { session_id: session, cwd: repo }),
          cwd: box.plain,
          role: "recall",
        },
        {
          host: "windsurf",
          event: "post-mcp-tool-use",
          stdin: loadPayload("windsurf", "post-mcp-tool-use", { trajectory_id: session }),
          cwd: repo,
          role: "recall",
        },
        {
          host: "gemini",
          event: "after-tool",
          stdin: loadPayload("gemini", "after-tool.recall-fused", {
            session_id: session,
            cwd: repo,
            tool_input: { query: "q" },
          }),
          cwd: box.plain,
          role: "recall",
        },
      ];
  }
}

/** The recall markers that unlock (session, repo) for every host: under a fault, only the fault can refuse. */
export function recallMarkers(stateDir: string, session: string, repo: string): string[] {
  const identity = repositoryIdentity(session, fs.realpathSync(repo));
  return ["recall", "codex-recall", "windsurf-recall", "dsh-recall", "gemini-recall"].map((kind) =>
    markerPath({ dir: stateDir }, kind, identity),
  );
}

export function writeRecallMarkers(stateDir: string, session: string, repo: string): void {
  for (const file of recallMarkers(stateDir, session, repo)) fs.writeFileSync(file, "1\n", { mode: 0o600 });
}

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * runProbes(box, probes, env, namespaceSetup?) → each probe's answer. With a setup script, every
 * probe runs in one `unshare -m` shell after it (so the mounts it makes hold for the whole row and
 * vanish with it); without, each probe is one process.
 */
export function runProbes(
  box: FuzzSandbox,
  probes: readonly Probe[],
  env: Record<string, string>,
  namespaceSetup?: string,
): ProbeRun[] {
  const stdinOf = (probe: Probe): string =>
    typeof probe.stdin === "string" ? probe.stdin : JSON.stringify(probe.stdin);
  if (namespaceSetup === undefined) {
    return probes.map((probe) => {
      const started = performance.now();
      const result = spawnSync(BINARY, [probe.host, probe.event], {
        input: stdinOf(probe),
        env,
        cwd: probe.cwd,
        timeout: 30_000,
        encoding: "utf8",
      });
      return {
        probe,
        raw: { exitCode: result.status ?? -1, stdout: result.stdout ?? "", stderr: result.stderr ?? "" },
        elapsedMs: performance.now() - started,
      };
    });
  }
  const io = fs.mkdtempSync(path.join(box.root, "io-"));
  const envWords = Object.entries(env)
    .map(([k, v]) => quote(`${k}=${v}`))
    .join(" ");
  const lines = ["set -e", namespaceSetup, "set +e"];
  probes.forEach((probe, i) => {
    fs.writeFileSync(path.join(io, `in.${i}`), stdinOf(probe));
    const file = (kind: string) => quote(path.join(io, `${kind}.${i}`));
    lines.push(
      `s=$(date +%s%N); (cd ${quote(probe.cwd)} && exec env -i ${envWords} ${quote(BINARY)} ${probe.host} ${probe.event} <${file("in")} >${file("out")} 2>${file("err")}); echo $? >${file("rc")}; echo $(( ($(date +%s%N) - s) / 1000000 )) >${file("ms")}`,
    );
  });
  lines.push(`find ${quote(box.tmp)} >${quote(path.join(io, "listing"))}`);
  const script = path.join(io, "row.sh");
  fs.writeFileSync(script, `${lines.join("\n")}\n`);
  const result = spawnSync("unshare", ["-m", "--propagation", "private", "sh", script], {
    encoding: "utf8",
    timeout: 180_000,
  });
  if (result.status !== 0) throw new Error(`namespace run failed (exit ${result.status}): ${result.stderr}`);
  const read = (name: string) => fs.readFileSync(path.join(io, name), "utf8");
  const runs = probes.map((probe, i) => ({
    probe,
    raw: { exitCode: Number(read(`rc.${i}`).trim()), stdout: read(`out.${i}`), stderr: read(`err.${i}`) },
    elapsedMs: Number(read(`ms.${i}`).trim()),
  }));
  lastListing = read("listing").split("\n").filter(Boolean);
  fs.rmSync(io, { recursive: true, force: true });
  return runs;
}

/** The TMPDIR listing taken inside the namespace by the last runProbes call with a setup. */
export let lastListing: string[] = [];

let mountSupport: string | null | undefined;

/** mountNamespaceProblem() → null when `unshare -m` can mount a tmpfs here, else why not (cached). */
export function mountNamespaceProblem(): string | null {
  if (mountSupport !== undefined) return mountSupport;
  const probe = spawnSync(
    "unshare",
    [
      "-m",
      "--propagation",
      "private",
      "sh",
      "-c",
      'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"',
    ],
    { encoding: "utf8", timeout: 10_000 },
  );
  mountSupport =
    probe.status === 0
      ? null
      : `unshare -m cannot mount a tmpfs here (${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim()})`;
  return mountSupport;
}

/** judged(run) → the classified answer of a probe, or throws with the contract violations. */
export function judged(run: ProbeRun): Judged {
  const result = judgeAnswer(entryById(`${run.probe.host}/${run.probe.event}`), run.raw);
  if (!result.ok) throw new Error(`${run.probe.host} ${run.probe.event}: ${result.problems.join("; ")}`);
  return result.answer;
}

/**
 * cellProblems(expect, runs) → what differs from the cell's promise (empty: kept). Each check
 * reads the host's own spelling through judgeAnswer, so a wrong shape is a problem too.
 */
export function cellProblems(expect: Expect, runs: readonly ProbeRun[]): string[] {
  const problems: string[] = [];
  const label = (run: ProbeRun) => `${run.probe.host} ${run.probe.event} (${run.probe.role})`;
  for (const run of runs) {
    let answer: Judged;
    try {
      answer = judged(run);
    } catch (error) {
      problems.push((error as Error).message);
      continue;
    }
    const want = (ok: boolean, what: string) => {
      if (!ok)
        problems.push(
          `${label(run)}: expected ${what}, got ${answer.kind}${answer.text ? `: ${answer.text.slice(0, 160)}` : ""}`,
        );
    };
    const dsh = run.probe.host === "dsh";
    switch (expect) {
      case "guidance":
        want(answer.kind === "context" && (answer.text ?? "").includes("load_working_context("), "the load guidance");
        break;
      case "instructions":
        want(
          answer.kind === "instructions" && (answer.text ?? "").includes("save_working_context("),
          "the summariser instructions",
        );
        break;
      case "stop-generic":
        if (run.probe.role === "first-stop")
          want(
            answer.kind === "continue" &&
              /save_working_context\(/.test(answer.text ?? "") &&
              !/unavailable|cannot read/.test(answer.text ?? ""),
            "the save reminder",
          );
        else want(answer.kind === "pass", "a pass");
        break;
      case "stop-unavailable":
        if (run.probe.optedIn && run.probe.role === "first-stop" && !dsh) {
          want(
            answer.kind === "continue" &&
              /state is unavailable|cannot (read|write)/.test(answer.text ?? "") &&
              /until the state directory/.test(answer.text ?? ""),
            'a "state unavailable" continuation saying it repeats until repaired',
          );
        } else if (!run.probe.optedIn) {
          // Not opted in: never a continuation; the cause on stderr, and on Claude one line for the user.
          want(
            answer.kind === "pass" &&
              /state unavailable/.test(run.raw.stderr) &&
              (run.probe.host !== "claude" || answer.userMessage !== undefined),
            "a pass with a stderr line (Claude: and a systemMessage)",
          );
        } else {
          want(
            answer.kind === "pass",
            dsh ? "a pass (the bridge never sets stop_hook_active)" : "a pass on the continuation Stop",
          );
        }
        break;
      case "stop-checkpoint":
        if (run.probe.role === "first-stop")
          want(answer.kind === "continue" && checkpointTargets(answer.text).length > 0, "a checkpoint");
        else want(answer.kind === "pass", "a pass");
        break;
      case "refuse-if-opted-in":
        want(
          run.probe.role === "guarded" ? answer.kind === "deny" : answer.kind === "pass",
          run.probe.role === "guarded" ? "a refusal" : "a pass",
        );
        break;
      case "refuse-to-queue": {
        const refuse = run.probe.role === "guarded" && run.probe.host !== "windsurf";
        want(refuse ? answer.kind === "deny" : answer.kind === "pass", refuse ? "a refusal" : "a pass");
        break;
      }
      case "pass":
        want(answer.kind === "pass", "a pass");
        break;
      case "as-usual":
        want(
          run.probe.role === "bash" ? answer.kind === "replace" : answer.kind === "pass",
          run.probe.role === "bash" ? "the compressed Bash result" : "a pass",
        );
        break;
      case "usage":
        break;
    }
  }
  return problems;
}

/** sessionEndProblems(runs) → problems when a Stop sequence (as the host runs it) never reaches a pass. */
export function sessionEndProblems(runs: readonly ProbeRun[]): string[] {
  const byHost = new Map<string, Judged[]>();
  for (const run of runs) {
    if (run.probe.event !== "stop" && run.probe.event !== "after-agent") continue;
    try {
      byHost.set(run.probe.host, [...(byHost.get(run.probe.host) ?? []), judged(run)]);
    } catch (error) {
      return [(error as Error).message];
    }
  }
  return [...byHost]
    .filter(([, answers]) => !answers.some((a) => a.kind === "pass"))
    .map(([host]) => `${host}: Stop never passed: the session could not end`);
}

/**
 * writeFakeCompiler(dir, "killed") → the path of a fake velesdb-memory that misbehaves once it
 * compiles. Faults, not the real wire (fixtures/compilers/lib.sh has that): velesdb-memory
 * prints one line or nothing, so a half answer or 50 MB only comes from a crash or a broken build.
 */
export function writeFakeCompiler(dir: string, kind: "killed" | "floods"): string {
  const lib = path.join(FIXTURES, "compilers", "lib.sh");
  const misbehave =
    kind === "killed"
      ? // Half an answer, then SIGKILL from inside: the hook reads a truncated JSON object.
        `printf '{"content":"half a compil'\nkill -KILL $$`
      : // 50 MB on stdout; the watchdog stops reading (and kills the group) at its 16 MB cap.
        `printf '{"content":"'\nhead -c 52428800 /dev/zero | tr '\\000' 'a'\nprintf '","risk":"low"}\\n'`;
  const file = path.join(dir, `${kind}.sh`);
  fs.writeFileSync(
    file,
    `#!/bin/sh\n# A fake velesdb-memory that answers the probe and then ${kind === "killed" ? "dies by a signal mid-answer" : "prints 50 MB"}.\n. ${quote(lib)}\nfake_parse_args "$@"\nfake_read_stdin\nif [ "$is_probe" = yes ]; then fake_answer probe '"low"'; exit 0; fi\n${misbehave}\n`,
    { mode: 0o755 },
  );
  return file;
}
