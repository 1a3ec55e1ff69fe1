// The `velesdb-memory compile-stdin` cases: what scripts/capture-velesdb-memory-wire.ts runs the
// real binary through (its answers land in test/e2e/velesdb-memory-wire.json, `compileStdin`)
// and what test/compiler-contract.test.ts runs every double and the real binary through.
import { PROBE_BUDGET, PROBE_CORPUS } from "../../src/core/compiler.ts";
import { realisticLog } from "./compress-fixtures.ts";

export interface CompileCase {
  readonly name: string;
  readonly args: readonly string[];
  readonly stdin: string | Uint8Array;
}

/** A Bash-like output well over docs/contract.md §8's 12 000-byte floor. */
export const BASH_OUTPUT = realisticLog(40_000);
const NINE_MIB = "x".repeat(9 * 1024 * 1024);
const QUERY = ["--budget", "2000", "--query", "Bash output"];

/** The case whose message carries the real compiler's own token count (a double counts its own way). */
export const NOTHING_FITS = "--budget 1 on the Bash output (nothing fits)";

export const COMPILE_CASES: readonly CompileCase[] = [
  {
    name: "the probe: a one-line corpus at --budget 4096",
    args: ["--budget", String(PROBE_BUDGET)],
    stdin: PROBE_CORPUS,
  },
  { name: 'a 40 KB Bash output at --budget 2000 --query "Bash output"', args: QUERY, stdin: BASH_OUTPUT },
  { name: "empty stdin", args: QUERY, stdin: "" },
  { name: "whitespace only", args: QUERY, stdin: " \n\t \n" },
  { name: "bytes that are not UTF-8", args: QUERY, stdin: new Uint8Array([0x62, 0x69, 0x6e, 0xff, 0xfe, 0x00, 0x0a]) },
  { name: "more than 8 MiB", args: QUERY, stdin: NINE_MIB },
  { name: "an unknown flag", args: ["--nope"], stdin: "text\n" },
  { name: "--budget 0", args: ["--budget", "0"], stdin: "text\n" },
  { name: "--budget that is not a number", args: ["--budget", "lots"], stdin: "text\n" },
  { name: "--budget without a value", args: ["--budget"], stdin: "text\n" },
  { name: "--query without a value", args: ["--query"], stdin: "text\n" },
  { name: NOTHING_FITS, args: ["--budget", "1", "--query", "Bash output"], stdin: BASH_OUTPUT },
];

/** What one compile-stdin call did, as the wire file keeps it: the exit status, and stderr for a refusal. */
export interface CompileOutcome {
  readonly exitCode: number;
  /** The answer's keys in order, for a success. */
  readonly keys?: string[];
  /** stderr, whole, for a refusal. */
  readonly stderr?: string;
}

/** The token count of a nothing-fits refusal, masked: it is the compiler's own estimate. */
export const tokensMasked = (stderr: string): string =>
  stderr.replace(/fits none of the \d+ input tokens/, "fits none of the N input tokens");
