// The Pi extension `install --client pi` writes: Pi (the pi coding agent) has no command
// hooks, only in-process extensions (TypeScript modules loaded with jiti), so this small module
// is our registry entry. It knows no rule: it spawns `velesdb-hooks pi <event>` with a JSON
// payload and applies the answer (src/hosts/pi.ts says what each hook receives and answers).
// Measured constraints it is written around (Pi 0.73.1):
// - It imports only `node:child_process`: no Pi package is needed at run time, so the same
//   file loads in Pi 0.73.1 and in its renamed successor line.
// - Every spawn is synchronous and bounded (10 s, killed after); a binary that is missing,
//   crashes, hangs or answers something unreadable changes nothing (docs/contract.md §10), except that an
//   exit 2 is a refusal whose reason is stderr.
// - `before_agent_start` runs for every prompt: the context is asked for once per session and
//   returned as a message the session keeps.
// - Pi has no stop event and no `stop_hook_active`: the continuation is queued as a follow-up
//   at the `turn_end` of a turn that called no tool (at `agent_end` it is dropped), and the
//   extension marks the next such turn as the one after its own continuation.
// - Pi has no MCP of its own. With pi-mcp-adapter a velesdb-memory call reaches `tool_result`
//   as the proxy tool `mcp` (or a direct tool), its raw MCP result in `details.mcpResult`, its
//   server and tool in `details.server` / `details.tool`: only those are sent.

import { editToolsMatcher } from "../../hosts/descriptors/descriptor.ts";
import { PI } from "../../hosts/pi.ts";
import { askFunctionSource } from "./opencode-plugin.ts";

// The tools the extension sends on, and the server whose results it sends: the descriptor's
// (src/hosts/descriptors/pi.ts), which the hook reads too.
const VELESDB_SERVER = `^${PI.velesdbTools.server}$`;

/** piExtensionBody(binaryPath) → the module's code, the binary's path written as a JSON string literal. */
export function piExtensionBody(binaryPath: string): string {
  return `import { spawnSync } from "node:child_process";

const BINARY = ${JSON.stringify(binaryPath)};
const EDIT_TOOLS = /${editToolsMatcher(PI)}/;
const VELESDB_SERVER = /${VELESDB_SERVER}/;

${askFunctionSource(PI)}

const text = (value) => (typeof value === "string" && value !== "" ? value : undefined);
const sessionOf = (ctx) => {
  try {
    return String(ctx.sessionManager.getSessionId());
  } catch {
    return "pi";
  }
};
const cwdOf = (ctx) => (typeof ctx?.cwd === "string" ? ctx.cwd : process.cwd());
const base = (ctx) => ({ session_id: sessionOf(ctx), cwd: cwdOf(ctx) });

export default function velesdbHooks(pi) {
  const started = new Set();
  const continued = new Set();
  pi.on("before_agent_start", async (_event, ctx) => {
    const id = sessionOf(ctx);
    if (started.has(id)) return;
    started.add(id);
    const context = text(ask("session-start", { ...base(ctx), source: "startup" }).system);
    if (context !== undefined) return { message: { customType: "velesdb-hooks", content: context, display: false } };
  });
  pi.on("tool_call", async (event, ctx) => {
    if (!EDIT_TOOLS.test(String(event?.toolName))) return;
    const answer = ask("pre-tool-use", { ...base(ctx), tool_name: event.toolName, tool_input: event.input });
    if (text(answer.deny) !== undefined) return { block: true, reason: answer.deny };
  });
  pi.on("tool_result", async (event, ctx) => {
    const details = event?.details !== null && typeof event?.details === "object" ? event.details : {};
    const bash = event?.toolName === ${JSON.stringify(PI.shellTool)};
    if (!bash && !VELESDB_SERVER.test(String(details.server))) return;
    const response = bash
      ? { content: event.content, isError: event.isError === true, fullOutputPath: details.fullOutputPath, truncated: details.truncation?.truncated === true }
      : { server: details.server, tool: details.tool, error: details.error, mcpResult: details.mcpResult, isError: event.isError === true };
    const answer = ask("post-tool-use", { ...base(ctx), tool_name: event.toolName, tool_input: event.input, tool_response: response });
    if (bash && text(answer.output) !== undefined) return { content: [{ type: "text", text: answer.output }] };
  });
  pi.on("turn_end", async (event, ctx) => {
    if (Array.isArray(event?.toolResults) && event.toolResults.length > 0) return;
    const id = sessionOf(ctx);
    const active = continued.delete(id);
    const prompt = text(ask("stop", { ...base(ctx), stop_hook_active: active }).prompt);
    if (prompt === undefined) return;
    continued.add(id);
    try {
      pi.sendUserMessage(prompt, { deliverAs: "followUp" });
    } catch {
      continued.delete(id);
    }
  });
}`;
}
