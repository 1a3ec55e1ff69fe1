// Fault injection (docs/failure-modes.md): every row of the failure table (test/support/failure-table.ts) is a
// fault injected here into the compiled binary, and every cell's promise is checked across the
// hosts of its column; each row also proves nothing outside the state directory changed and the
// session can still end. The same table generates docs/failure-modes.md, and the last test
// fails when that page's block differs from it.
// Rows that need a full or read-only filesystem run inside a private mount namespace
// (`unshare -m`, tmpfs with size=); where that is not permitted they are skipped, saying why.
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { stopDecision } from "../src/core/checkpoint.ts";
import type { Decision } from "../src/core/decision.ts";
import { recordRecallEvidence } from "../src/core/evidence.ts";
import { createHookInput } from "../src/core/hook-input.ts";
import { claude } from "../src/hosts/claude.ts";
import { FAILURE_PAGE, pageWithTable } from "../scripts/failure-table.ts";
import { COLUMNS, FAILURE_TABLE, type Column, type FailureRow } from "./support/failure-table.ts";
import {
  cellProblems,
  columnProbes,
  faultSession,
  judged,
  lastListing,
  mountNamespaceProblem,
  recallMarkers,
  runProbes,
  sessionEndProblems,
  writeFakeCompiler,
  writeRecallMarkers,
  type ProbeRun,
} from "./support/fuzz-faults.ts";
import {
  FAKE_COMPILER,
  isInside,
  makeFuzzSandbox,
  snapshot,
  snapshotChanges,
  type FuzzSandbox,
} from "./support/fuzz-sandbox.ts";
import { FIXTURES, loadPayload, runBinary } from "./support/hook-runner.ts";
import { checkpointTargets } from "./support/learning.ts";
import { testIf } from "./support/requires.ts";

let box: FuzzSandbox;
beforeEach(() => {
  box = makeFuzzSandbox("fault");
});
afterEach(() => box.cleanup());

const compiler = (name: string) => path.join(FIXTURES, "compilers", `${name}.sh`);

/** Every row runs with state in one known place (dsh included) and a capable compiler. */
function baseEnv(): Record<string, string> {
  return { ...box.env, VELESDB_HOOKS_STATE_DIR: box.stateDir, VELESDB_MEMORY_BIN: FAKE_COMPILER };
}

interface Fault {
  /** Changes made on the real filesystem before the row. */
  readonly setup?: () => void;
  /** Environment variants: the row's probes run once per variant. */
  readonly env?: () => ReadonlyArray<Record<string, string>>;
  /** Shell run inside the row's mount namespace before its probes. */
  readonly namespace?: () => string;
  /** Replaces every probe's payload. */
  readonly stdin?: string;
  /** Where the "guarded" edit goes (default: the opted-in repository). */
  readonly guardedDir?: () => string;
  /** The longest any probe may take. */
  readonly boundMs?: number;
}

const q = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A tmpfs on TMPDIR holding a 0700 state directory with this row's recall markers. */
function stateOnTmpfs(rowId: string, after: string): string {
  const markers = recallMarkers(box.stateDir, faultSession(rowId), box.repo);
  return [
    `mount -t tmpfs -o size=256k,mode=0755 tmpfs ${q(box.tmp)}`,
    `mkdir -m 700 ${q(box.stateDir)}`,
    ...markers.map((m) => `printf '1\\n' >${q(m)} && chmod 600 ${q(m)}`),
    after,
  ].join("\n");
}

const FAULTS: Readonly<Record<string, Fault>> = {
  "stdin-not-json": { stdin: "{oops, not a payload" },
  "state-unsafe": {
    setup: () => {
      const elsewhere = path.join(box.root, "elsewhere");
      fs.mkdirSync(elsewhere, { mode: 0o700 });
      fs.symlinkSync(elsewhere, box.stateDir);
    },
  },
  "config-malformed": { guardedDir: () => box.broken },
  "compiler-missing": {
    env: () => [{ ...baseEnv(), VELESDB_MEMORY_BIN: path.join(box.root, "no-such-velesdb-memory") }],
  },
  "compiler-hangs": {
    env: () => [{ ...baseEnv(), VELESDB_MEMORY_BIN: compiler("hangs"), VELESDB_HOOK_PROBE_TIMEOUT: "1" }],
    boundMs: 5000,
  },
  "compiler-killed": { env: () => [{ ...baseEnv(), VELESDB_MEMORY_BIN: writeFakeCompiler(box.root, "killed") }] },
  "compiler-floods": {
    env: () => [{ ...baseEnv(), VELESDB_MEMORY_BIN: writeFakeCompiler(box.root, "floods") }],
    boundMs: 15_000,
  },
  "compiler-bad-answer": {
    env: () =>
      ["bad-json", "risk-unknown", "risk-not-string", "risk-missing"].map((name) => ({
        ...baseEnv(),
        VELESDB_MEMORY_BIN: compiler(name),
      })),
  },
  // Filled to the last block: creating a file may still work (tmpfs has inodes left), writing into it does not.
  "state-disk-full": {
    namespace: () =>
      stateOnTmpfs(
        "state-disk-full",
        `dd if=/dev/zero of=${q(path.join(box.tmp, "filler"))} bs=4096 2>/dev/null || true`,
      ),
  },
  "state-read-only": { namespace: () => stateOnTmpfs("state-read-only", `mount -o remount,ro ${q(box.tmp)}`) },
};

const NAMESPACE_ROWS = new Set(
  Object.entries(FAULTS)
    .filter(([, f]) => f.namespace)
    .map(([id]) => id),
);
const namespaceProblem = mountNamespaceProblem();
if (namespaceProblem) console.log(`faults: skipping ${[...NAMESPACE_ROWS].join(", ")}: ${namespaceProblem}`);

function probesFor(row: FailureRow, fault: Fault): Array<{ column: Column; runs: ReturnType<typeof columnProbes> }> {
  const session = faultSession(row.id);
  // Every row runs the Stop probes, even where Stop is "—": the session must still be able to end.
  const columns = COLUMNS.map(([c]) => c).filter((c) => row.cells[c] !== null || c === "stop");
  return columns.map((column) => {
    let probes = columnProbes(column, box, session);
    if (column === "guard" && fault.guardedDir) {
      const guarded = columnProbes("guard", { ...box, repo: fault.guardedDir() }, session).filter(
        (p) => p.role === "guarded",
      );
      probes = [...guarded, ...probes.filter((p) => p.role === "unguarded")];
    }
    if (fault.stdin !== undefined) probes = probes.map((p) => ({ ...p, stdin: fault.stdin! }));
    return { column, runs: probes };
  });
}

describe.each(FAILURE_TABLE.filter((row) => FAULTS[row.id]).map((row) => [row.id, row] as const))(
  "fault %s",
  (id, row) => {
    const fault = FAULTS[id]!;
    const skip = NAMESPACE_ROWS.has(id) && namespaceProblem !== null;
    testIf(!skip, `a mount namespace (${namespaceProblem})`)(
      `${row.situation}: the failure table's answers, nothing touched outside state, the session can end`,
      () => {
        fault.setup?.();
        const envs = fault.env?.() ?? [baseEnv()];
        const before = snapshot(box.root, [box.stateDir]);
        const planned = probesFor(row, fault);
        const problems: string[] = [];
        const stopRuns: ProbeRun[] = [];
        for (const env of envs) {
          const all = planned.flatMap((p) => p.runs);
          const runs = runProbes(box, all, env, fault.namespace?.());
          let offset = 0;
          for (const { column, runs: probes } of planned) {
            const mine = runs.slice(offset, offset + probes.length);
            offset += probes.length;
            const cell = row.cells[column];
            if (cell) problems.push(...cellProblems(cell.expect, mine).map((p) => `${column}: ${p}`));
            if (column === "stop") stopRuns.push(...mine);
          }
          const bound = fault.boundMs ?? 10_000;
          problems.push(
            ...runs
              .filter((r) => r.elapsedMs > bound)
              .map((r) => `${r.probe.host} ${r.probe.event} took ${r.elapsedMs.toFixed(0)} ms (bound ${bound})`),
          );
          if (row.cells.posttooluse?.expect === "pass") {
            const archives = path.join(box.stateDir, "tool-output");
            if (fs.existsSync(archives) && fs.readdirSync(archives).length > 0)
              problems.push("an archive was left although nothing was replaced");
          }
        }
        problems.push(...sessionEndProblems(stopRuns));
        expect(problems).toEqual([]);
        expect(snapshotChanges(before, snapshot(box.root, [box.stateDir]))).toEqual([]);
        if (fault.namespace) {
          // Inside the namespace, TMPDIR held only the state directory and the filler.
          const foreign = lastListing.filter(
            (p) => p !== box.tmp && p !== path.join(box.tmp, "filler") && !isInside(p, box.stateDir),
          );
          expect(foreign).toEqual([]);
        }
      },
    );
  },
);

describe("fault record-vanishes", () => {
  // A record that another hook consumed between our directory listing and our read. No binary
  // can be paused between two syscalls, so the rule runs in-process with readdirSync wrapped:
  // it lists the real directory, then deletes one listed record before returning.
  const row = FAILURE_TABLE.find((r) => r.id === "record-vanishes")!;
  const session = faultSession(row.id);
  const env = () => ({ ...baseEnv() });

  function secondRepo(): string {
    const dir = path.join(box.root, "ws", "repo2");
    fs.mkdirSync(path.join(dir, "src"), { recursive: true });
    fs.writeFileSync(
      path.join(dir, ".velesdb-hooks.json"),
      JSON.stringify({ project: "fuzz-guarded-2", enforce_learning_loop: true }),
    );
    return fs.realpathSync(dir);
  }

  function vanishOneListed(kind: string): { vanished: () => string | undefined; restore: () => void } {
    let vanished: string | undefined;
    const original = fs.readdirSync;
    const spy = spyOn(fs, "readdirSync").mockImplementation(((dir: fs.PathLike, options?: unknown) => {
      const names = (original as (d: fs.PathLike, o?: unknown) => string[])(dir, options);
      if (vanished === undefined && String(dir).includes(`${kind}-`) && names.length > 1) {
        vanished = path.join(String(dir), names[0]!);
        fs.unlinkSync(vanished);
      }
      return names;
    }) as typeof fs.readdirSync);
    return { vanished: () => vanished, restore: () => spy.mockRestore() };
  }

  test(`Stop: ${row.cells.stop!.text}`, () => {
    const repo2 = secondRepo();
    const before = snapshot(box.root, [box.stateDir]);
    fs.mkdirSync(box.stateDir, { mode: 0o700 });
    writeRecallMarkers(box.stateDir, session, box.repo);
    writeRecallMarkers(box.stateDir, session, repo2);
    for (const dir of [box.repo, repo2]) {
      const edit = runBinary(
        ["claude", "pre-tool-use"],
        loadPayload("claude", "pre-tool-use.write", {
          session_id: session,
          cwd: box.plain,
          tool_input: { file_path: path.join(dir, "src", "a.ts"), content: "x" },
        }),
        { env: env(), cwd: box.plain },
      );
      expect(edit.stdout).toBe("{}\n");
    }
    const vanish = vanishOneListed("learning-dirty");
    let decision: Decision;
    try {
      decision = stopDecision(
        createHookInput(
          loadPayload("claude", "stop.first", { session_id: session, cwd: box.plain }),
          "",
          claude.profile,
          env(),
        ),
      );
    } finally {
      vanish.restore();
    }
    expect(vanish.vanished()).toBeDefined();
    expect(decision.kind).toBe("continue");
    const text = decision.kind === "continue" ? decision.text : "";
    expect(text).not.toMatch(/cannot read|malformed/);
    expect(checkpointTargets(text)).toHaveLength(1);
    // The session ends: the next Stop (through the binary) passes.
    const next = runBinary(
      ["claude", "stop"],
      loadPayload("claude", "stop.first", { session_id: session, cwd: box.plain, stop_hook_active: true }),
      { env: env(), cwd: box.plain },
    );
    expect(
      judged({
        probe: { host: "claude", event: "stop", stdin: "", cwd: box.plain, role: "next-stop" },
        raw: next,
        elapsedMs: 0,
      }).kind,
    ).toBe("pass");
    expect(snapshotChanges(before, snapshot(box.root, [box.stateDir]))).toEqual([]);
  });

  test(`PostToolUse: ${row.cells.posttooluse!.text}`, () => {
    const repo2 = secondRepo();
    const before = snapshot(box.root, [box.stateDir]);
    // Two refused edits queue two pending repositories for this session.
    for (const dir of [box.repo, repo2]) {
      const refused = runBinary(
        ["claude", "pre-tool-use"],
        loadPayload("claude", "pre-tool-use.write", {
          session_id: session,
          cwd: box.plain,
          tool_input: { file_path: path.join(dir, "src", "a.ts"), content: "x" },
        }),
        { env: env(), cwd: box.plain },
      );
      expect(refused.stdout).toContain('"permissionDecision":"deny"');
    }
    const vanish = vanishOneListed("pending-recall");
    let note: string;
    try {
      const payload = loadPayload("claude", "post-tool-use.recall-fused", {
        session_id: session,
        cwd: box.repo,
        tool_input: { query: "q" },
      });
      note = recordRecallEvidence(createHookInput(payload, "", claude.profile, env()), {
        toolName: payload.tool_name,
        toolInput: payload.tool_input,
        toolResponse: payload.tool_response,
        form: "structured",
      });
    } finally {
      vanish.restore();
    }
    expect(vanish.vanished()).toBeDefined();
    expect(note).not.toMatch(/not recorded|malformed/);
    // The recall from the opted-in cwd unlocked that repository: its edit now passes.
    const edit = runBinary(
      ["claude", "pre-tool-use"],
      loadPayload("claude", "pre-tool-use.write", {
        session_id: session,
        cwd: box.plain,
        tool_input: { file_path: path.join(box.repo, "src", "a.ts"), content: "x" },
      }),
      { env: env(), cwd: box.plain },
    );
    expect(edit.stdout).toBe("{}\n");
    expect(snapshotChanges(before, snapshot(box.root, [box.stateDir]))).toEqual([]);
  });
});

test("fault unknown-entry: every column answers exit 64, nothing on stdout, one stderr line", () => {
  const row = FAILURE_TABLE.find((r) => r.id === "unknown-entry")!;
  expect(COLUMNS.every(([c]) => row.cells[c]?.expect === "usage")).toBe(true);
  const before = snapshot(box.root, []);
  for (const args of [
    ["nohost", "session-start"],
    ["claude", "no-such-event"],
    ["codex", "pre-compact"],
    ["windsurf", "stop"],
    ["dsh", "post-mcp-tool-use"],
    ["claude", "stop", "extra"],
  ]) {
    const result = runBinary(args, "{}", { env: baseEnv(), cwd: box.plain });
    expect([args.join(" "), result.exitCode, result.stdout]).toEqual([args.join(" "), 64, ""]);
    expect(result.stderr).toMatch(/^velesdb-hooks: [^\n]+\n$/);
  }
  expect(snapshotChanges(before, snapshot(box.root, []))).toEqual([]);
});

test("positive control: without a fault, the same probes get guidance, reminders, unlocked edits and a compressed Bash result", () => {
  fs.mkdirSync(box.stateDir, { mode: 0o700 });
  const session = faultSession("healthy");
  writeRecallMarkers(box.stateDir, session, box.repo);
  const expected: Record<Column, (runs: ProbeRun[]) => string[]> = {
    lifecycle: (runs) => cellProblems("guidance", runs),
    precompact: (runs) => cellProblems("instructions", runs),
    stop: (runs) => cellProblems("stop-generic", runs),
    guard: (runs) => cellProblems("pass", runs),
    posttooluse: (runs) => {
      const kinds = runs.map((r) => `${r.probe.host}:${r.probe.role}:${judged(r).kind}`);
      return kinds.includes("claude:bash:replace") ? [] : [`the Bash result was not compressed: ${kinds.join(", ")}`];
    },
  };
  for (const [column] of COLUMNS) {
    const runs = runProbes(box, columnProbes(column, box, session), baseEnv());
    expect(expected[column](runs)).toEqual([]);
  }
});

test("docs/failure-modes.md's failure table is generated from test/support/failure-table.ts (bun scripts/failure-table.ts)", () => {
  const page = fs.readFileSync(FAILURE_PAGE, "utf8");
  expect(page).toBe(pageWithTable(page));
  expect(page).toContain("# When things go wrong");
  // Every row has its fault here; a row added to the table without one fails this test.
  const covered = new Set([...Object.keys(FAULTS), "record-vanishes", "unknown-entry"]);
  expect(FAILURE_TABLE.map((r) => r.id).filter((id) => !covered.has(id))).toEqual([]);
});
