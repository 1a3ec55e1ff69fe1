#!/usr/bin/env node
// The one test double of velesdb-memory, in plain Node ESM (node: imports only), so it runs
// without bun on PATH. Every suite that needs the server uses it; nothing else in the repository
// may invent its answers.
//
// Derived from velesdb-memory 0.12.0 (github:cyberlife-coder/VelesDB at commit
// 92b0086a7e6c40319f28e77cbb5959d7be9cb1e5) and checked against that binary driven by hand:
// - crates/velesdb-memory/src/mcp.rs, mcp/context_tools.rs: the tool table (20 tools), each
//   tool `Result<Json<T>, ErrorData>`; get_info (serverInfo, tools capability, instructions).
// - crates/velesdb-memory/src/mcp/dto.rs, context/model.rs: the result shapes.
// - rmcp 3.1.1 src/handler/server/wrapper/json.rs + model.rs `CallToolResult::structured`: a
//   `Json<T>` success is ONE text block holding the compact JSON AND the same value as
//   `structuredContent`, `isError: false`; handler/server/tool.rs: an `Err(ErrorData)` is a
//   JSON-RPC error (not a result); an `Err` of any other type is a result with `isError: true`.
// - The transport is newline-delimited JSON-RPC 2.0 on stdin/stdout, one message per line.
// velesdb-memory-wire.json (next to this file) holds what that binary answered over stdio,
// verbatim but for its prose (hash embedder, private HOME and store: empty, then one remembered
// fact): initialize's result, tools/list's result (20 tools, with their inputSchema and
// outputSchema), one real answer per tool, its errors. The server's instructions and every
// description are replaced by a placeholder of ours (no sentence of theirs in this repository;
// hosts only pass them to the model). The double splices those bytes in, so ids above 2^53 stay
// exact (a JS number would round them). velesdb-memory-double.test.ts checks the double against
// that binary, prose masked, when VH_VELESDB_MEMORY_BIN names one.
//
//   node fake-velesdb-memory.mjs [--mode MODE[,MODE...]] [--log FILE] [anything else, ignored]
//
// Arguments it does not know are ignored, as an installer may register the real server with
// none or with its own. --log FILE appends each received message to FILE as one JSON line, so
// a test can tell which tools the model called through the host. MODE picks what tools/call
// answers (tools/list follows, see below):
// - structured (default): what velesdb-memory 0.12.0 answers: Json<T>, a recall with one memory.
// - empty: the same, with the recall tools finding nothing: `{"memories":[]}`.
// - rpc-error: the recall tools fail as rmcp reports a tool's Err(ErrorData): a JSON-RPC error
//   response, here velesdb-memory's own for a recall filter naming a reserved key
//   (service.rs reject_reserved_keys → mcp.rs to_error → -32602).
// - is-error: the recall tools answer a CallToolResult with isError:true and one text block, no
//   structuredContent: what rmcp 3.1.1 sends when a tool's arguments do not deserialize
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
// complete original. Its wire is velesdb-memory 0.12.0's (see compileStdin).
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
const structuredResult = (rawJson) => `{"content":[{"type":"text","text":${JSON.stringify(rawJson)}}],"structuredContent":${rawJson},"isError":false}`;
const textResult = (text, isError) => `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"isError":${isError}}`;

/** The real answer to tools/call `name` in `mode`, as one JSON-RPC line (`id` echoed). */
export function toolCallLine(mode, id, name, args, protocolVersion = WIRE.fallbackProtocolVersion) {
  if (Object.hasOwn(WIRE.errors, name)) return errorLine(id, WIRE.errors[name]);
  if (!Object.hasOwn(WIRE.answers, name)) return errorLine(id, WIRE.unknownToolError);
  const real = WIRE.answers[name];
  const recall = isRecall(name, args);
  if (recall && mode === "rpc-error") return errorLine(id, WIRE.recallError);
  const result = (body) => resultLine(id, withResultType(body, protocolVersion));
  if (recall && mode === "is-error") return result(textResult(WIRE.argumentErrorText, true));
  if (recall && mode === "non-json") return result(textResult(WIRE.proseAnswer, false));
  const raw = recall && mode === "empty" ? (WIRE.emptyAnswers[name] ?? real) : real;
  return result(textServer(mode) ? textResult(raw, false) : structuredResult(raw));
}

/** Whether the peer negotiated 2026-07-28 or later, whose results rmcp 3.1.1 shapes differently. */
const isNewPeer = (protocolVersion) => protocolVersion >= "2026-07-28";

/**
 * withResultType('{"content":…}', version) → rmcp 3.1.1 adds `"resultType":"complete"` first to a
 * tools/call result only for a peer that negotiated 2026-07-28 or later (model.rs
 * strip_result_type_for_legacy_peer); every older peer gets the historical shape.
 */
function withResultType(rawResult, protocolVersion) {
  return isNewPeer(protocolVersion) ? `{"resultType":"complete",${rawResult.slice(1)}` : rawResult;
}

/** tools/list's result: the real one, without outputSchema for a server without structured output. */
function toolsListResult(mode) {
  if (!textServer(mode)) return WIRE.toolsList;
  const list = JSON.parse(WIRE.toolsList);
  for (const tool of list.tools) delete tool.outputSchema;
  return JSON.stringify(list);
}

/** negotiate("2025-06-18") → the version rmcp answers: the client's when known, else its latest. */
const negotiate = (asked) => (WIRE.protocolVersions.includes(asked) ? asked : WIRE.fallbackProtocolVersion);

/** initialize's result: the real one, with the negotiated protocol version. */
function initializeResult(protocolVersion) {
  const result = JSON.parse(WIRE.initialize);
  result.protocolVersion = protocolVersion;
  return JSON.stringify(result);
}

/**
 * answerLine(mode, message, session) → the server's one response line, or undefined for a
 * notification. `session` keeps the protocol version negotiated at initialize.
 */
export function answerLine(mode, { id, method, params }, session = {}) {
  if (id === undefined || id === null) return undefined;
  const version = session.protocolVersion ?? WIRE.fallbackProtocolVersion;
  switch (method) {
    case "initialize":
      session.protocolVersion = negotiate(params?.protocolVersion);
      return resultLine(id, initializeResult(session.protocolVersion));
    case "ping":
      // Measured: a 2026-07-28 peer gets "method not found" for ping; older peers get {}.
      return isNewPeer(version) ? errorLine(id, WIRE.ping2026Error) : resultLine(id, "{}");
    case "tools/list": {
      // A 2026-07-28 peer's list opens with resultType, ttlMs and cacheScope (measured).
      const list = toolsListResult(mode);
      return resultLine(id, isNewPeer(version) ? `${WIRE.toolsListPrefix2026}${list.slice(1)}` : list);
    }
    case "tools/call":
      return toolCallLine(mode, id, params?.name, params?.arguments ?? {}, version);
    default:
      return errorLine(id, { code: -32601, message: "Method not found" });
  }
}

// The wire of the real `velesdb-memory compile-stdin`, read from velesdb-memory 0.12.0
// (github:cyberlife-coder/VelesDB, crates/velesdb-memory/src/main.rs at
// 92b0086a7e6c40319f28e77cbb5959d7be9cb1e5: parse_compile_stdin_args, compile_stdin_json,
// run_compile_stdin; the 8 MiB cap is limits.rs MAX_TRANSCRIPT_BYTES) and checked against that
// binary by test/compiler-contract.test.ts: exit 0 with ONE line
// {"content","tokens_in","tokens_out","tokens_saved","risk"} (that order) + "\n", or exit 1 with
// nothing on stdout and Rust's `Error: <Debug of the error>` line on stderr.
function compileStdin(args) {
  const refuse = (debug) => {
    process.stderr.write(`Error: ${debug}\n`);
    process.exit(1);
  };
  const flags = args.slice(1);
  for (let i = 0; i < flags.length; i += 2) {
    const value = flags[i + 1];
    if (flags[i] === "--budget") {
      if (value === undefined) refuse(JSON.stringify("--budget requires a value"));
      if (!/^\+?[0-9]+$/.test(value)) refuse(JSON.stringify(`--budget expects a positive integer, got ${JSON.stringify(value)}`));
      if (Number(value) === 0) refuse(JSON.stringify("--budget must be greater than 0"));
    } else if (flags[i] === "--query") {
      if (value === undefined) refuse(JSON.stringify("--query requires a value"));
    } else refuse(JSON.stringify(`unknown compile-stdin flag ${JSON.stringify(flags[i])}`));
  }
  const chunks = [];
  process.stdin.on("data", (c) => chunks.push(c));
  process.stdin.on("end", () => {
    const bytes = Buffer.concat(chunks);
    let input;
    try {
      input = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      refuse('Error { kind: InvalidData, message: "stream did not contain valid UTF-8" }');
    }
    if (input.trim() === "") refuse(JSON.stringify("compile-stdin received empty input on stdin"));
    const cap = 8 * 1024 * 1024;
    if (bytes.length > cap) refuse(`ContextOverLimit(${JSON.stringify(`transcript of ${bytes.length} bytes exceeds the cap of ${cap} bytes`)})`);
    const lines = input.split("\n").filter((l) => l !== "");
    const content = `E2E-COMPILED lines=${lines.length} first=${lines[0] ?? ""} last=${lines.at(-1) ?? ""}`;
    const tokensIn = Math.ceil(input.length / 4);
    const tokensOut = Math.min(Math.ceil(content.length / 4), tokensIn);
    const answer = { content, tokens_in: tokensIn, tokens_out: tokensOut, tokens_saved: tokensIn - tokensOut, risk: "low" };
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
  if (unknown !== undefined) throw new Error(`unknown --mode ${JSON.stringify(unknown)} (one of ${MODES.join(", ")}, or a comma list of them)`);
  const text = modes.find(textServer);
  if (text !== undefined && modes.some((m) => m === "structured" || m === "empty")) {
    throw new Error(`--mode ${JSON.stringify(arg)} mixes a text server (text-only, non-json) with structured output (structured, empty)`);
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
        const out = m !== null && typeof m === "object" ? answerLine(modeOf(sequence, m, session), m, session) : undefined;
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
