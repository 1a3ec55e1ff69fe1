#!/usr/bin/env node
// A stand-in for velesdb-memory, in plain Node ESM (node: imports only), so it runs without
// bun on PATH:
// - MCP server, run by the hosts as a stdio subprocess:
//     node fake-velesdb-memory.mjs [--fail] [--answer TEXT] [--log FILE]
//   Newline-delimited JSON-RPC 2.0 on stdin/stdout: initialize, tools/list, tools/call, ping;
//   notifications are ignored. Tools recall_fused, recall, load_working_context,
//   save_working_context all answer {content:[{type:"text",text:"[]"}],isError:false}, or
//   isError:true with --fail; `--answer TEXT` replaces "[]" (Gemini CLI turns a bare JSON
//   array answer into an error result). With --log FILE each received message is appended to
//   FILE as one JSON line, so a test can tell which tools the model called through the host.
// - `compile-stdin [--budget N] [--query Q]` (SPEC §7), run directly as VELESDB_MEMORY_BIN by
//   the PostToolUse hook (the harness makes this file executable). Its "compiled view" is one
//   line naming the input's line count, first and last line, so a test can tell it compiled
//   the complete original. Its wire is velesdb-memory 0.12.0's (see compileStdin).
import * as fs from "node:fs";

const args = process.argv.slice(2);
if (args[0] === "compile-stdin") compileStdin();
else serveMcp();

// The wire of the real `velesdb-memory compile-stdin`, read from velesdb-memory 0.12.0
// (github:cyberlife-coder/VelesDB, crates/velesdb-memory/src/main.rs at
// 92b0086a7e6c40319f28e77cbb5959d7be9cb1e5: parse_compile_stdin_args, compile_stdin_json,
// run_compile_stdin; the 8 MiB cap is limits.rs MAX_TRANSCRIPT_BYTES) and checked against that
// binary by test/compiler-contract.test.ts: exit 0 with ONE line
// {"content","tokens_in","tokens_out","tokens_saved","risk"} (that order) + "\n", or exit 1 with
// nothing on stdout and Rust's `Error: <Debug of the error>` line on stderr.
function compileStdin() {
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

function serveMcp() {
  const failing = args.includes("--fail");
  const answerIndex = args.indexOf("--answer");
  const answerText = answerIndex >= 0 ? args[answerIndex + 1] : "[]";
  const logIndex = args.indexOf("--log");
  const logFile = logIndex >= 0 ? args[logIndex + 1] : undefined;
  const tools = ["recall_fused", "recall", "load_working_context", "save_working_context"].map((name) => ({
    name,
    description: `velesdb-memory fake: ${name}`,
    inputSchema: { type: "object", properties: {}, additionalProperties: true },
  }));
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

  const answer = ({ id, method, params }) => {
    if (id === undefined || id === null) return; // a notification
    switch (method) {
      case "initialize":
        return send({
          jsonrpc: "2.0",
          id,
          result: {
            protocolVersion: typeof params?.protocolVersion === "string" ? params.protocolVersion : "2025-06-18",
            capabilities: { tools: { listChanged: false } },
            serverInfo: { name: "velesdb-memory", version: "0.0.0-e2e" },
          },
        });
      case "ping":
        return send({ jsonrpc: "2.0", id, result: {} });
      case "tools/list":
        return send({ jsonrpc: "2.0", id, result: { tools } });
      case "tools/call":
        return send({
          jsonrpc: "2.0",
          id,
          result: failing
            ? { content: [{ type: "text", text: "velesdb-memory fake: failure" }], isError: true }
            : { content: [{ type: "text", text: answerText }], isError: false },
        });
      default:
        return send({ jsonrpc: "2.0", id, error: { code: -32601, message: `method not found: ${method}` } });
    }
  };

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
        send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
        continue;
      }
      if (logFile) {
        try {
          fs.appendFileSync(logFile, `${JSON.stringify(message)}\n`);
        } catch {
          /* logging is best effort */
        }
      }
      for (const m of Array.isArray(message) ? message : [message]) answer(m);
    }
  });
  process.stdin.on("end", () => process.exit(0));
}
