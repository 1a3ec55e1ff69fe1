// Captures the wire of the real velesdb-memory into test/e2e/velesdb-memory-wire.json, the file
// the double (test/e2e/fake-velesdb-memory.mjs) answers from. Run it after changing the pinned
// release (docs/real-server.md):
//
//   VELESDB_MEMORY_BIN_REAL=<velesdb-memory 0.17.0> bun scripts/capture-velesdb-memory-wire.ts
//
// It drives the binary over stdio in a private HOME and store (hash embedder, the default)
// through the sessions of test/e2e/velesdb-memory-cases.ts, and through `compile-stdin` with the
// cases of test/support/compile-stdin-cases.ts, and keeps what it answered verbatim except for
// the server's prose (its instructions and every description become a placeholder of ours, so no
// sentence of theirs is in this repository) and the day a fact was stored. Anything the double
// could not reproduce from one answer per tool (a protocol version that changes the shape of
// tools/list or of a result, a non-object answer) stops the capture with the difference.
// test/e2e/velesdb-memory-contract.test.ts then runs the double and the binary side by side.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findRealVelesdbMemory, REAL_SOURCE, REAL_VERSION } from "../test/support/real-velesdb-memory.ts";
import { COMPILE_CASES, type CompileOutcome } from "../test/support/compile-stdin-cases.ts";
import { mcpSession, initialize, initialized, toolCall, type McpRequest } from "../test/e2e/mcp-session.ts";
import {
  ASKED_VERSIONS,
  CANONICAL_CALLS,
  emptyStoreSession,
  factStoreSession,
  INJECTION_TRIGGERS,
  RECALL_TOOLS,
  REFUSAL_CALLS,
  statelessSession,
} from "../test/e2e/velesdb-memory-cases.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const OUT = path.join(ROOT, "test", "e2e", "velesdb-memory-wire.json");
const PLACEHOLDER_INSTRUCTIONS = "(velesdb-memory's own server instructions, not copied)";

function fail(message: string): never {
  console.error(`capture-velesdb-memory-wire: ${message}`);
  process.exit(1);
}

const real = findRealVelesdbMemory();
if (!real.ok) fail(real.why);
const BIN = real.bin;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "vh-capture-"));
process.on("exit", () => fs.rmSync(scratch, { recursive: true, force: true }));
let stores = 0;
/** A fresh private HOME and store for one session: the binary never sees this machine's own data. */
function privateEnv(): Record<string, string> {
  const dir = path.join(scratch, `s${++stores}`);
  fs.mkdirSync(path.join(dir, "home"), { recursive: true });
  return {
    HOME: path.join(dir, "home"),
    TMPDIR: dir,
    VELESDB_MEMORY_PATH: path.join(dir, "store"),
    VELESDB_MEMORY_QUIET: "1",
    LANG: "C.UTF-8",
  };
}
const session = (requests: McpRequest[]): Promise<string[]> => mcpSession([BIN], requests, privateEnv());

// biome-ignore lint/suspicious/noExplicitAny: a host's or the server's JSON wire, read field by field as the test suites read it (docs/development/lint.md)
const parse = (line: string): any => JSON.parse(line);
/** The prose-free copy of a result without ids above 2^53 (initialize, tools/list). */
// biome-ignore lint/suspicious/noExplicitAny: a host's or the server's JSON wire, read field by field as the test suites read it (docs/development/lint.md)
function masked(result: unknown, _toolName?: string): any {
  return JSON.parse(JSON.stringify(result), function (key, value) {
    if (key === "instructions" && typeof value === "string") return PLACEHOLDER_INSTRUCTIONS;
    if (key === "description" && typeof value === "string") {
      // A tool's own description (the object holding inputSchema) or a schema field's.
      return this && typeof this === "object" && "inputSchema" in this
        ? `(velesdb-memory's own description of ${(this as { name: string }).name}, not copied)`
        : "(velesdb-memory's own description, not copied)";
    }
    return value;
  });
}
/** rawResult(line) → the `result` member of an answer line, as its bytes (ids above 2^53 stay exact). */
function rawResult(line: string): string {
  const prefix = /^\{"jsonrpc":"2\.0","id":\d+,"result":/.exec(line);
  if (!prefix || !line.endsWith("}")) fail(`not a result line: ${line.slice(0, 200)}`);
  return line.slice(prefix[0].length, -1);
}
const undated = (text: string): string =>
  text.replace(/"_veles_date\\?":\d{8}/g, (m) => m.replace(/\d{8}$/, "20261201"));

// --- initialize at every version asked: what is negotiated, and whether anything else moves --
const negotiated: Record<string, string> = {};
// biome-ignore lint/suspicious/noExplicitAny: a host's or the server's JSON wire, read field by field as the test suites read it (docs/development/lint.md)
let initializeResult: any;
let toolsList: string | undefined;
for (const version of ASKED_VERSIONS) {
  const [init, listed, ping, called] = await session([
    initialize(version),
    initialized,
    { method: "tools/list" },
    { method: "ping" },
    toolCall("recall_fused", { query: "x" }),
  ]);
  const result = parse(init!).result;
  negotiated[version] = result.protocolVersion;
  const shape = masked({ ...result, protocolVersion: "NEGOTIATED" });
  if (initializeResult === undefined) initializeResult = shape;
  else if (JSON.stringify(shape) !== JSON.stringify(initializeResult))
    fail(`initialize at ${version} differs from the others beyond protocolVersion`);
  const list = rawResult(listed!);
  if (toolsList === undefined) toolsList = list;
  else if (list !== toolsList) fail(`tools/list after initialize at ${version} differs from the others`);
  if (rawResult(ping!) !== "{}") fail(`ping after initialize at ${version} answered ${ping}`);
  if (
    rawResult(called!) !==
    '{"content":[{"type":"text","text":"{\\"memories\\":[]}"}],"structuredContent":{"memories":[]},"isError":false}'
  ) {
    fail(`a tools/call after initialize at ${version} answered ${called}`);
  }
}
if (JSON.stringify(JSON.parse(toolsList!)) !== toolsList)
  fail("tools/list holds a number JSON.parse cannot keep exact");
const fallback = negotiated["1999-01-01"]!;
const tools = masked(JSON.parse(toolsList!));
const toolNames: string[] = tools.tools.map((t: { name: string }) => t.name);
const uncovered = toolNames.filter((name) => name !== "remember" && !CANONICAL_CALLS.some(([n]) => n === name));
if (uncovered.length > 0) fail(`tools without a canonical call in velesdb-memory-cases.ts: ${uncovered.join(", ")}`);

// --- MCP 2026-07-28 without initialize: server/discover, then _meta on every request ---------
// What Claude Code 2.1.328 speaks to this server. Measured: the same answers as an initialized
// session, a result opening with resultType and tools/list with its cache fields; errors unchanged.
const [discovered, pingFirst, listed2026, ping2026, called2026, isError2026, rpcError2026, unknown2026, discoverBare] =
  await session(statelessSession());
const discoverResult = parse(discovered!).result;
if (JSON.stringify(discoverResult) !== rawResult(discovered!))
  fail("server/discover's result holds a number JSON.parse cannot keep exact");
const list2026 = rawResult(listed2026!);
const toolsListPrefix2026 = list2026.slice(0, list2026.length - toolsList!.length + 1);
if (`${toolsListPrefix2026}${toolsList!.slice(1)}` !== list2026 || !toolsListPrefix2026.startsWith("{"))
  fail("tools/list at 2026-07-28 is not the same list with fields in front");
if (rawResult(pingFirst!) !== "{}") fail(`ping right after server/discover answered ${pingFirst}`);
const ping2026Error = parse(ping2026!).error;
if (!ping2026Error) fail(`ping after a 2026-07-28 request answered ${ping2026}`);
const legacyEmptyRecall =
  '{"content":[{"type":"text","text":"{\\"memories\\":[]}"}],"structuredContent":{"memories":[]},"isError":false}';
const call2026 = rawResult(called2026!);
const resultPrefix2026 = call2026.slice(0, call2026.length - legacyEmptyRecall.length + 1);
if (`${resultPrefix2026}${legacyEmptyRecall.slice(1)}` !== call2026)
  fail(`a tools/call at 2026-07-28 answered ${called2026}`);
const discoverMetaError = parse(discoverBare!).error;
if (!discoverMetaError) fail(`server/discover without _meta answered ${discoverBare}`);

// --- every tool's answer, on the store holding the fact and on an empty one ---------------------
interface ToolAnswers {
  answers: Record<string, string>;
  errors: Record<string, { code: number; message: string }>;
  argumentErrors: Record<string, string>;
}
/** split(requests, lines) → each tools/call's answer filed by what it is: a Json<T>, a JSON-RPC error, an argument error. */
function split(requests: McpRequest[], lines: string[]): ToolAnswers & { byRequest: string[] } {
  const out: ToolAnswers & { byRequest: string[] } = { answers: {}, errors: {}, argumentErrors: {}, byRequest: [] };
  const answered = requests.filter((r) => !("notification" in r));
  answered.forEach((request, i) => {
    const line = lines[i]!;
    out.byRequest.push(line);
    if (!("method" in request) || request.method !== "tools/call") return;
    const name = (request.params as { name: string }).name;
    if (!toolNames.includes(name)) return; // no_such_tool: unknownToolError below
    if (Object.hasOwn(out.answers, name) || Object.hasOwn(out.errors, name) || Object.hasOwn(out.argumentErrors, name))
      return; // the first call of a tool is its canonical one
    const message = parse(line);
    if (message.error) {
      out.errors[name] = message.error;
      return;
    }
    const result = message.result;
    const text: string = result.content?.[0]?.text;
    if (result.isError === true) {
      out.argumentErrors[name] = text;
      return;
    }
    // rmcp's Json<T>: one text block with the compact JSON, the same value as structuredContent.
    const expected = `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text},"isError":false}`;
    if (rawResult(line) !== expected) fail(`${name} answered outside the Json<T> wire: ${line.slice(0, 300)}`);
    out.answers[name] = undated(text);
  });
  return out;
}

const factRequests = factStoreSession();
const fact = split(factRequests, await session(factRequests));
const emptyRequests = emptyStoreSession();
const empty = split(emptyRequests, await session(emptyRequests));
const emptyAnswers = Object.fromEntries(
  RECALL_TOOLS.filter((name) => empty.answers[name] !== fact.answers[name]).map((name) => [name, empty.answers[name]!]),
);

const answerOf = (request: McpRequest): string => {
  const i = factRequests.filter((r) => !("notification" in r)).indexOf(request);
  return fact.byRequest[i]!;
};
const rpcError = parse(answerOf(INJECTION_TRIGGERS["rpc-error"])).error;
const isError = parse(answerOf(INJECTION_TRIGGERS["is-error"])).result;
const [unknownTool, blankSession, longSession, emptyWorking] = REFUSAL_CALLS.map((r) => parse(answerOf(r)).error);
// The same failures in a 2026-07-28 session: the isError result with the prefix, the errors as they are.
if (rawResult(isError2026!) !== `${resultPrefix2026}${JSON.stringify(isError).slice(1)}`)
  fail(`the argument error at 2026-07-28 answered ${isError2026}`);
if (
  JSON.stringify(parse(rpcError2026!).error) !== JSON.stringify(rpcError) ||
  JSON.stringify(parse(unknown2026!).error) !== JSON.stringify(unknownTool)
)
  fail("a JSON-RPC error differs at 2026-07-28");

// --- compile-stdin ---------------------------------------------------------------------------
const compileStdin: Record<string, CompileOutcome> = {};
for (const c of COMPILE_CASES) {
  const run = Bun.spawnSync([BIN, "compile-stdin", ...c.args], {
    stdin: typeof c.stdin === "string" ? Buffer.from(c.stdin) : c.stdin,
    env: { PATH: "/usr/bin:/bin", ...privateEnv() },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  compileStdin[c.name] =
    run.exitCode === 0
      ? { exitCode: 0, keys: Object.keys(JSON.parse(run.stdout.toString())) }
      : { exitCode: run.exitCode ?? -1, stderr: run.stderr.toString() };
}

const wire = {
  _about: `What ${REAL_SOURCE} (rmcp as cargo resolved it without --locked) published and answered, captured by scripts/capture-velesdb-memory-wire.ts from that binary: verbatim except its prose (the server instructions and every description, replaced by a placeholder of ours, so no sentence of theirs is in this repository) and the day stamp of stored facts (20261201). Hash embedder, private HOME and store. See fake-velesdb-memory.mjs for how the double answers from it, and velesdb-memory-contract.test.ts for the check against the binary.`,
  version: REAL_VERSION,
  negotiated,
  fallbackProtocolVersion: fallback,
  discover: JSON.stringify(masked(discoverResult)),
  discoverMetaError,
  toolsListPrefix2026,
  resultPrefix2026,
  ping2026Error,
  initialize: JSON.stringify(initializeResult),
  toolsList: JSON.stringify(tools),
  answers: fact.answers,
  emptyAnswers,
  errors: fact.errors,
  argumentErrors: fact.argumentErrors,
  recallError: rpcError,
  argumentErrorText: isError.content[0].text,
  unknownToolError: unknownTool,
  workingContextRefusals: { blank: blankSession, tooLong: longSession, empty: emptyWorking },
  proseAnswer: "Found 1 memory: guarded.txt is generated by the build; edit parser.txt instead.",
  compileStdin,
};
fs.writeFileSync(OUT, `${JSON.stringify(wire, null, 2)}\n`);
console.log(
  `capture-velesdb-memory-wire: ${toolNames.length} tools, ${Object.keys(fact.answers).length} answers, ${Object.keys(fact.errors).length} errors, ${Object.keys(fact.argumentErrors).length} argument errors, ${COMPILE_CASES.length} compile-stdin cases → ${path.relative(ROOT, OUT)}`,
);
