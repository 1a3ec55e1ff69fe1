// bun scripts/bench/compress-corpus.ts → compression on the corpus of real command outputs
// (test/support/real-outputs.ts), through the compiled hook of each host with a channel and the
// real `velesdb-memory compile-stdin` ($VELESDB_MEMORY_BIN): per item, replaced or not and why,
// bytes and tokens the model reads before and after, the lines it needs kept, the time; then the
// aggregate over the items at or above the size floor, against the goal (docs/compression.md):
// ≥ 80 % replaced, ≤ 25 % of the bytes read, 0 needed lines lost.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { estimateTokens } from "../../src/core/token-estimate.ts";
import { hookCommand } from "../../test/support/compress-fixtures.ts";
import { realOutputs, type RealOutput } from "../../test/support/real-outputs.ts";

export const SIZE_FLOOR = 12_000;
export const HOSTS = ["claude", "codex", "copilot", "opencode"] as const;
export type CorpusHost = (typeof HOSTS)[number];

export interface ItemResult {
  readonly host: CorpusHost;
  readonly name: string;
  readonly tool: string;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly replaced: boolean;
  /** The hook's stderr line when it passed the output through. */
  readonly why: string;
  readonly needed: number;
  readonly lost: readonly string[];
  readonly ms: number;
}

/** What the model reads of an output when nothing replaces it, per host. */
export function readAsIs(host: CorpusHost, output: RealOutput): string {
  const joined =
    output.stderr === ""
      ? output.stdout
      : output.stdout === ""
        ? output.stderr
        : `${output.stdout.replace(/\n$/, "")}\n${output.stderr}`;
  return host === "copilot"
    ? `${joined.replace(/\n$/, "")}\n<shellId: 0 completed with exit code ${output.exitCode}>`
    : joined;
}

/** payloadFor(host, output, cwd) → the PostToolUse payload that host sends for this command (the recorded shapes). */
export function payloadFor(host: CorpusHost, output: RealOutput, cwd: string): Record<string, unknown> {
  const session = `corpus-${host}`;
  switch (host) {
    case "claude":
      return {
        session_id: session,
        cwd,
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: { command: output.command, description: "run" },
        tool_response: { stdout: output.stdout, stderr: output.stderr, interrupted: false, isImage: false },
      };
    case "codex":
      return {
        session_id: session,
        cwd,
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: { command: output.command },
        tool_response: readAsIs("codex", output),
      };
    case "copilot":
      return {
        sessionId: session,
        timestamp: Date.now(),
        cwd,
        toolName: "bash",
        toolArgs: { command: output.command, description: "run" },
        toolResult: { resultType: "success", textResultForLlm: readAsIs("copilot", output) },
      };
    case "opencode": {
      const text = readAsIs("opencode", output);
      return {
        session_id: session,
        cwd,
        tool_name: "bash",
        tool_input: { command: output.command },
        tool_response: { title: output.command, output: text, metadata: { exit: output.exitCode, truncated: false } },
      };
    }
  }
}

/** modelReads(host, answer) → the text the host gives the model after our answer, or undefined when it passes. */
export function modelReads(host: CorpusHost, answer: string): string | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: a host's or the server's JSON wire, read field by field as the test suites read it (docs/development/lint.md)
  const parsed = JSON.parse(answer || "{}") as Record<string, any>;
  switch (host) {
    case "claude": {
      const updated = parsed.hookSpecificOutput?.updatedToolOutput;
      return updated === undefined ? undefined : `${updated.stdout}${updated.stderr ? `\n${updated.stderr}` : ""}`;
    }
    case "codex":
      return parsed.decision === "block" ? parsed.reason : undefined;
    case "copilot":
      return parsed.modifiedResult?.textResultForLlm;
    case "opencode":
      return parsed.output;
  }
}

/** runItem(host, output, env) → one pass of the compiled hook on it, judged. */
export function runItem(host: CorpusHost, output: RealOutput, env: Record<string, string>): ItemResult {
  const hook = hookCommand();
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "velesdb-corpus-"));
  try {
    const before = readAsIs(host, output);
    const started = performance.now();
    const run = Bun.spawnSync([hook.binary, host, "post-tool-use"], {
      stdin: Buffer.from(JSON.stringify(payloadFor(host, output, cwd))),
      env: { ...env, TMPDIR: cwd, XDG_STATE_HOME: path.join(cwd, "state"), HOME: cwd },
      cwd,
      stdout: "pipe",
      stderr: "pipe",
    });
    const ms = performance.now() - started;
    const read = modelReads(host, run.stdout.toString());
    const after = read ?? before;
    const present = new Set(after.split("\n"));
    return {
      host,
      name: output.name,
      tool: output.tool,
      bytesBefore: Buffer.byteLength(before),
      bytesAfter: Buffer.byteLength(after),
      tokensBefore: Math.ceil(estimateTokens(before)),
      tokensAfter: Math.ceil(estimateTokens(after)),
      replaced: read !== undefined,
      why: read === undefined ? run.stderr.toString().trim().split("\n")[0] || "(no note)" : "",
      needed: output.mustKeep.length,
      lost: read === undefined ? [] : output.mustKeep.filter((line) => !present.has(line)),
      ms,
    };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

export interface Aggregate {
  readonly host: CorpusHost;
  readonly items: number;
  readonly replaced: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  readonly lost: number;
}

export function aggregate(host: CorpusHost, results: readonly ItemResult[]): Aggregate {
  const counted = results.filter((r) => r.host === host && r.bytesBefore >= SIZE_FLOOR);
  return {
    host,
    items: counted.length,
    replaced: counted.filter((r) => r.replaced).length,
    bytesBefore: counted.reduce((sum, r) => sum + r.bytesBefore, 0),
    bytesAfter: counted.reduce((sum, r) => sum + r.bytesAfter, 0),
    lost: results.filter((r) => r.host === host).reduce((sum, r) => sum + r.lost.length, 0),
  };
}

/** runCorpusBench() → prints the table and the aggregates; true when every host meets the goal. */
export async function runCorpusBench(hosts: readonly CorpusHost[] = HOSTS): Promise<boolean> {
  const compiler = process.env.VELESDB_MEMORY_BIN;
  if (!compiler || !fs.existsSync(compiler)) {
    console.log(
      "corpus: VELESDB_MEMORY_BIN must name the real velesdb-memory (0.17.0) to measure compression on real outputs",
    );
    return false;
  }
  const corpus = await realOutputs();
  for (const item of corpus) if (!item.ok) console.log(`corpus: ${item.name}: unavailable (${item.problem})`);
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", VELESDB_MEMORY_BIN: compiler };
  const results: ItemResult[] = [];
  for (const host of hosts) for (const item of corpus) if (item.ok) results.push(runItem(host, item.output, env));
  console.log(
    "\nhost | output | tool | bytes before → after | tokens before → after | needed lines kept | ms | replaced (or why not)",
  );
  for (const r of results) {
    const kept = r.replaced ? `${r.needed - r.lost.length}/${r.needed}` : "n/a";
    console.log(
      `${r.host} | ${r.name} | ${r.tool} | ${r.bytesBefore} → ${r.bytesAfter} | ${r.tokensBefore} → ${r.tokensAfter} | ${kept} | ${r.ms.toFixed(0)} | ${r.replaced ? "yes" : `no: ${r.why}`}`,
    );
    for (const line of r.lost) console.log(`    lost: ${line}`);
  }
  let met = true;
  console.log(`\naggregate over the items of at least ${SIZE_FLOOR} bytes:`);
  for (const host of hosts) {
    const a = aggregate(host, results);
    const share = a.bytesBefore === 0 ? 0 : a.bytesAfter / a.bytesBefore;
    const ok = a.replaced >= 0.8 * a.items && share <= 0.25 && a.lost === 0;
    met &&= ok;
    console.log(
      `${host}: ${a.replaced}/${a.items} replaced, ${a.bytesAfter}/${a.bytesBefore} bytes read (${(share * 100).toFixed(1)} %), ${a.lost} needed lines lost — ${ok ? "goal met" : "goal NOT met"}`,
    );
  }
  return met;
}

if (import.meta.main) process.exit((await runCorpusBench()) ? 0 : 1);
