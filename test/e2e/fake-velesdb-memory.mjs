#!/usr/bin/env node
// The one test double of velesdb-memory, in plain Node ESM (node: imports only), so it runs
// without bun on PATH. Every suite that needs the server uses it; nothing else in the repository
// may invent its answers.
//
// Derived from velesdb-memory 0.17.0 as crates.io ships it (crate velesdb-memory-0.17.0, packaged
// from github:cyberlife-coder/VelesDB at a9eeabadcc96777cc42770fcc1492b472217e726 per its
// .cargo_vcs_info.json; built with --features http and rmcp 3.11.0, what `cargo install` resolves
// without --locked), and checked against that binary by velesdb-memory-contract.test.ts:
// - src/mcp.rs (tool table: 27 tools), src/mcp/advanced_tools.rs, status.rs, migration_tools.rs,
//   context_tools.rs: each tool `Result<Json<T>, ErrorData>`; get_info (serverInfo, the tools
//   capability, instructions).
// - rmcp src/handler/server/wrapper/json.rs + model.rs `CallToolResult::structured`: a `Json<T>`
//   success is ONE text block holding the compact JSON AND the same value as `structuredContent`,
//   `isError: false`; an `Err(ErrorData)` is a JSON-RPC error (not a result); arguments that do
//   not deserialize are a result with `isError: true` (router/tool.rs).
// - rmcp ≥ 3.7 answers an `initialize` at 2026-07-28 (a version without initialize, SEP-2567) or
//   at an unknown version with 2025-11-25, and every such session has the same shapes (no
//   resultType, ping answers {}): measured at every version in velesdb-memory-cases.ts. A real
//   2026-07-28 client (Claude Code 2.1.328) sends `server/discover` and then `_meta` on every
//   request instead; those answers open with resultType (tools/list with its cache fields too)
//   and ping is refused once such a request was served. Not modelled: what the real server
//   answers a request without `_meta` before any initialize (-32602), or a plain request after
//   a 2026-07-28 one.
// - The transport is newline-delimited JSON-RPC 2.0 on stdin/stdout, one message per line.
// velesdb-memory-wire.json (next to this file) holds what that binary answered over stdio,
// written by scripts/capture-velesdb-memory-wire.ts, verbatim but for its prose and the day
// stamp of a stored fact (hash embedder, private HOME and store: empty, then one remembered
// fact): initialize's result, tools/list's result (27 tools, with their inputSchema and
// outputSchema), one real answer per tool for the canonical arguments of velesdb-memory-cases.ts
// (whatever arguments it is sent), the errors of those calls, and save_working_context's
// refusals. The server's instructions and every description are replaced by a placeholder of
// ours (no sentence of theirs in this repository; hosts only pass them to the model). The double
// splices those bytes in, so ids above 2^53 stay exact (a JS number would round them).
//
// What the double does not do, by design (the contract test runs only what it models): it keeps
// no state, so load_working_context always answers the never-saved slot, every remember the
// fact's id, and memory_status/list_memories describe the store holding that one fact.
//
//   node fake-velesdb-memory.mjs [--mode MODE[,MODE...]] [--log FILE] [anything else, ignored]
//
// Arguments it does not know are ignored, as an installer may register the real server with
// none or with its own. --log FILE appends each received message to FILE as one JSON line, so
// a test can tell which tools the model called through the host. MODE picks what tools/call
// answers (tools/list follows, see below):
// - structured (default): what velesdb-memory 0.17.0 answers: Json<T>, a recall with one memory.
// - empty: the same, with the recall tools finding nothing: `{"memories":[]}`.
// - rpc-error: the recall tools fail as rmcp reports a tool's Err(ErrorData): a JSON-RPC error
//   response, here velesdb-memory's own for a recall filter naming a reserved key
//   (service.rs reject_reserved_keys → mcp.rs to_error → -32602).
// - is-error: the recall tools answer a CallToolResult with isError:true and one text block, no
//   structuredContent: what rmcp sends when a tool's arguments do not deserialize
//   (router/tool.rs into_tool_argument_error), e.g. a recall without `query`.
// - text-only: what a server without structured output sends (MCP before 2025-06-18, or an
//   rmcp tool returning `Content::text`): tools/list without outputSchema, and every answer as
//   the same JSON in one text block, no structuredContent.
// - non-json: like text-only, but the recall tools answer prose that is not JSON.
// Only the recall tools (recall, recall_fused, recall_where, entity, why, and compile_context
// with a memory_scope) change with the mode: load/save_working_context and the rest always
// answer as in `structured` (`text-only` and `non-json` as text), so a session starts normally.
// A comma list of modes answers the Nth recall call of the session in the Nth mode (the last
// mode for any later one), each answer byte for byte the one its mode alone gives, so one host
// run can go through several answers (recall-matrix.e2e.test.ts chains the failing ones). The
// list is one server: tools/list and the other tools answer as a text server when a mode of the
// list is `text-only` or `non-json`; a list mixing those with `structured`/`empty` is refused
// (no server publishes outputSchema and then answers without structuredContent).
//
// compile-stdin [--budget N] [--query Q] (docs/contract.md §7) is run directly as VELESDB_MEMORY_BIN by the
// PostToolUse hook (the harness makes this file executable). Its "compiled view" is one line
// naming the input's line count, first and last line, so a test can tell it compiled the
// complete original. Its wire is velesdb-memory 0.17.0's (see compileStdin).
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const MODES = ["structured", "empty", "rpc-error", "is-error", "text-only", "non-json"];

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WIRE = JSON.parse(fs.readFileSync(path.join(HERE, "velesdb-memory-wire.json"), "utf8"));

const RECALL_TOOLS = new Set(["recall", "recall_fused", "recall_where", "entity", "why"]);

/** isRecall("compile_context", {memory_scope:{}}) → true: the calls whose answer a mode changes. */
function isRecall(name, args) {
  if (RECALL_TOOLS.has(name)) return true;
  return name === "compile_context" && args !== null && typeof args === "object" && args.memory_scope != null;
}

/** Text without structured output: what `text-only` and `non-json` servers publish. */
const textServer = (mode) => mode === "text-only" || mode === "non-json";

/**
 * resultLine(id, rawResult) → one JSON-RPC response line, `rawResult` spliced in verbatim.
 * rmcp writes `{"jsonrpc":"2.0","id":…,"result":…}` then "\n".
 */
const resultLine = (id, rawResult) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${rawResult}}\n`;
const errorLine = (id, error) => `${JSON.stringify({ jsonrpc: "2.0", id, error })}\n`;

/** structuredResult('{"memories":[]}') → rmcp's CallToolResult::structured, serialised. */
const structuredResult = (rawJson) =>
  `{"content":[{"type":"text","text":${JSON.stringify(rawJson)}}],"structuredContent":${rawJson},"isError":false}`;
const textResult = (text, isError) =>
  `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"isError":${isError}}`;

/** The real answer to tools/call `name` in `mode`, as one JSON-RPC line (`id` echoed). */
export function toolCallLine(mode, id, name, args, stateless = false) {
  if (Object.hasOwn(WIRE.errors, name)) return errorLine(id, WIRE.errors[name]);
  const result = (body) => resultLine(id, stateless ? `${WIRE.resultPrefix2026}${body.slice(1)}` : body);
  if (Object.hasOwn(WIRE.argumentErrors, name)) return result(textResult(WIRE.argumentErrors[name], true));
  if (!Object.hasOwn(WIRE.answers, name)) return errorLine(id, WIRE.unknownToolError);
  if (name === "save_working_context") {
    const refusal = workingContextRefusal(args);
    if (refusal) return errorLine(id, refusal);
  }
  const real = WIRE.answers[name];
  const recall = isRecall(name, args);
  if (recall && mode === "rpc-error") return errorLine(id, WIRE.recallError);
  if (recall && mode === "is-error") return result(textResult(WIRE.argumentErrorText, true));
  if (recall && mode === "non-json") return result(textResult(WIRE.proseAnswer, false));
  const raw = recall && mode === "empty" ? (WIRE.emptyAnswers[name] ?? real) : real;
  return result(textServer(mode) ? textResult(raw, false) : structuredResult(raw));
}

const MAX_WORKING_CONTEXT_KEY_BYTES = 256;

/**
 * workingContextRefusal(args) → the real refusal of a save, or undefined: project, then session,
 * blank (after trimming) or over 256 UTF-8 bytes; then a working state that records nothing
 * (src/context/memory_bridge.rs save_working_context, limits.rs MAX_WORKING_CONTEXT_KEY_BYTES).
 * The messages are the captured ones, with the key and the length put in.
 */
function workingContextRefusal(args) {
  const refusals = WIRE.workingContextRefusals;
  for (const key of ["project", "session"]) {
    const value = typeof args?.[key] === "string" ? args[key] : "";
    if (value.trim() === "") return { ...refusals.blank, message: refusals.blank.message.replace("session", key) };
    const bytes = Buffer.byteLength(value);
    if (bytes > MAX_WORKING_CONTEXT_KEY_BYTES)
      return {
        ...refusals.tooLong,
        message: refusals.tooLong.message.replace("session", key).replace(/\d+ bytes/, `${bytes} bytes`),
      };
  }
  const working = args?.working !== null && typeof args?.working === "object" ? args.working : {};
  const goal = typeof working.goal === "string" && working.goal.trim() !== "";
  const lists = Object.entries(working).some(
    ([key, value]) => key !== "goal" && Array.isArray(value) && value.length > 0,
  );
  return goal || lists ? undefined : refusals.empty;
}

/** tools/list's result: the real one, without outputSchema for a server without structured output. */
function toolsListResult(mode) {
  if (!textServer(mode)) return WIRE.toolsList;
  const list = JSON.parse(WIRE.toolsList);
  for (const tool of list.tools) delete tool.outputSchema;
  return JSON.stringify(list);
}

// MCP 2026-07-28 has no initialize (SEP-2567): a client sends `server/discover`, then the
// protocol version and its capabilities in every request's `_meta` (Claude Code 2.1.328 does,
// measured). The versions the real server lists in discover but never agrees to at initialize
// are those ("2026-07-28"); such a request is answered with 2026 shapes (resultType first).
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const STATELESS_VERSIONS = JSON.parse(WIRE.discover).supportedVersions.filter((v) => WIRE.negotiated[v] !== v);
/** validMeta(_meta) → whether discover's `_meta` names the protocol version and the client's capabilities, as rmcp requires. */
const validMeta = (meta) =>
  meta !== null &&
  typeof meta === "object" &&
  typeof meta[META_VERSION] === "string" &&
  meta["io.modelcontextprotocol/clientCapabilities"] !== null &&
  typeof meta["io.modelcontextprotocol/clientCapabilities"] === "object";

/** negotiate("2026-07-28") → the version the real server answered when asked that one ("2025-11-25"), else its fallback. */
const negotiate = (asked) =>
  typeof asked === "string" && Object.hasOwn(WIRE.negotiated, asked)
    ? WIRE.negotiated[asked]
    : WIRE.fallbackProtocolVersion;

/** initialize's result: the real one, with the negotiated protocol version. */
const initializeResult = (protocolVersion) =>
  WIRE.initialize.replace('"protocolVersion":"NEGOTIATED"', `"protocolVersion":${JSON.stringify(protocolVersion)}`);

/**
 * answerLine(mode, message, session) → the server's one response line, or undefined for a
 * notification. `session` keeps the protocol version negotiated at initialize.
 */
export function answerLine(mode, { id, method, params }, session = {}) {
  if (id === undefined || id === null) return undefined;
  const stateless = STATELESS_VERSIONS.includes(params?._meta?.[META_VERSION]);
  switch (method) {
    case "initialize":
      session.protocolVersion = negotiate(params?.protocolVersion);
      return resultLine(id, initializeResult(session.protocolVersion));
    case "server/discover":
      return validMeta(params?._meta) ? resultLine(id, WIRE.discover) : errorLine(id, WIRE.discoverMetaError);
    case "ping":
      // Measured: {} until the session served a 2026-07-28 request, then "method not found".
      return session.stateless ? errorLine(id, WIRE.ping2026Error) : resultLine(id, "{}");
    case "tools/list":
      if (stateless) session.stateless = true;
      return resultLine(
        id,
        stateless ? `${WIRE.toolsListPrefix2026}${toolsListResult(mode).slice(1)}` : toolsListResult(mode),
      );
    case "tools/call":
      if (stateless) session.stateless = true;
      return toolCallLine(mode, id, params?.name, params?.arguments ?? {}, stateless);
    default:
      return errorLine(id, { code: -32601, message: "Method not found" });
  }
}

// The wire of the real `velesdb-memory compile-stdin`, read from velesdb-memory 0.17.0
// (src/daemon_commands.rs run_compile_stdin, src/cli_flags.rs; the 8 MiB cap is limits.rs
// MAX_TRANSCRIPT_BYTES) and checked against that binary by test/compiler-contract.test.ts with
// the messages scripts/capture-velesdb-memory-wire.ts captured: exit 0 with ONE line
// {"content","tokens_in","tokens_out","tokens_saved","risk"} (that order) + "\n", or exit 1 with
// nothing on stdout and `Error: <Display of the error>` on stderr (0.16.0 dropped the Debug
// quoting 0.12.0 had).
function compileStdin(args) {
  const refuse = (message) => {
    process.stderr.write(`Error: ${message}\n`);
    process.exit(1);
  };
  const flags = args.slice(1);
  for (let i = 0; i < flags.length; i += 2) {
    const value = flags[i + 1];
    if (flags[i] === "--budget") {
      if (value === undefined) refuse("--budget requires a value");
      if (!/^\+?[0-9]+$/.test(value)) refuse(`--budget expects a positive integer, got ${JSON.stringify(value)}`);
      if (Number(value) === 0) refuse("--budget must be greater than 0");
    } else if (flags[i] === "--query") {
      if (value === undefined) refuse("--query requires a value");
    } else refuse(`unknown compile-stdin flag ${JSON.stringify(flags[i])}`);
  }
  const chunks = [];
  process.stdin.on("data", (c) => chunks.push(c));
  process.stdin.on("end", () => {
    const bytes = Buffer.concat(chunks);
    let input;
    try {
      input = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      refuse("stream did not contain valid UTF-8");
    }
    if (input.trim() === "") refuse("compile-stdin received empty input on stdin");
    const cap = 8 * 1024 * 1024;
    if (bytes.length > cap)
      refuse(`context request over limit: transcript of ${bytes.length} bytes exceeds the cap of ${cap} bytes`);
    const lines = input.split("\n").filter((l) => l !== "");
    // As the real one does with an input inside its budget (the hook sizes its view to fit:
    // src/core/compress-shape.ts): the whole input, here after a marker line the checks look for.
    const content = `E2E-COMPILED lines=${lines.length}\n${input}`;
    const tokensIn = Math.ceil(input.length / 4);
    const tokensOut = Math.min(Math.ceil(content.length / 4), tokensIn);
    const answer = {
      content,
      tokens_in: tokensIn,
      tokens_out: tokensOut,
      tokens_saved: tokensIn - tokensOut,
      risk: "low",
    };
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
}

/**
 * modeSequence("is-error,text-only") → { modes: ["is-error","text-only"], server: "text-only" }:
 * the modes of the recall calls in order, and the mode the rest of the server answers in (the
 * list's text mode if it has one, else its first). Throws a one-line reason for a bad list.
 */
export function modeSequence(arg) {
  const modes = String(arg).split(",");
  const unknown = modes.find((m) => !MODES.includes(m));
  if (unknown !== undefined)
    throw new Error(`unknown --mode ${JSON.stringify(unknown)} (one of ${MODES.join(", ")}, or a comma list of them)`);
  const text = modes.find(textServer);
  if (text !== undefined && modes.some((m) => m === "structured" || m === "empty")) {
    throw new Error(
      `--mode ${JSON.stringify(arg)} mixes a text server (text-only, non-json) with structured output (structured, empty)`,
    );
  }
  return { modes, server: text ?? modes[0] };
}

/**
 * modeOf(sequence, message, session) → the mode that answers `message`: a recall call takes the
 * next mode of the list (counted in `session.recalls`), anything else the server's mode.
 */
export function modeOf({ modes, server }, message, session) {
  if (message.method !== "tools/call" || message.id === undefined || message.id === null) return server;
  if (!isRecall(message.params?.name, message.params?.arguments ?? {})) return server;
  const n = session.recalls ?? 0;
  session.recalls = n + 1;
  return modes[Math.min(n, modes.length - 1)];
}

function serveMcp(args) {
  const modeIndex = args.indexOf("--mode");
  let sequence;
  try {
    sequence = modeSequence(modeIndex >= 0 ? args[modeIndex + 1] : "structured");
  } catch (error) {
    process.stderr.write(`fake-velesdb-memory: ${error.message}\n`);
    process.exit(2);
  }
  const logIndex = args.indexOf("--log");
  const logFile = logIndex >= 0 ? args[logIndex + 1] : undefined;

  const session = {};
  let buffer = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        process.stdout.write(errorLine(null, { code: -32700, message: "Parse error" }));
        continue;
      }
      if (logFile) {
        try {
          fs.appendFileSync(logFile, `${JSON.stringify(message)}\n`);
        } catch {
          /* logging is best effort */
        }
      }
      for (const m of Array.isArray(message) ? message : [message]) {
        const out =
          m !== null && typeof m === "object" ? answerLine(modeOf(sequence, m, session), m, session) : undefined;
        if (out !== undefined) process.stdout.write(out);
      }
    }
  });
  process.stdin.on("end", () => process.exit(0));
}

function sameFile(a, b) {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}

// Run as a program (by a host, or as VELESDB_MEMORY_BIN); imported, it only exports its answers.
if (process.argv[1] !== undefined && sameFile(process.argv[1], fileURLToPath(import.meta.url))) {
  const args = process.argv.slice(2);
  if (args[0] === "compile-stdin") compileStdin(args);
  else serveMcp(args);
}
