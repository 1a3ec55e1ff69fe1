// The OpenCode plugin `install --client opencode` writes: OpenCode has no command hooks, only
// in-process plugins, so this small ES module is our registry entry. It knows no rule: it
// spawns `velesdb-hooks opencode <event>` with a JSON payload and applies the answer (the
// host module, src/hosts/opencode.ts, says what each hook receives and what the answers are).
// Measured constraints it is written around:
// - It imports only `node:child_process`: importing `@opencode-ai/plugin` would depend on the
//   `npm install` OpenCode runs in its config directory, which stalls offline.
// - Every spawn is synchronous and bounded (10 s, killed after); a binary that is missing,
//   crashes, hangs or answers something unreadable changes nothing (docs/contract.md §10: hosts let the
//   tool run when a hook cannot), except that an exit 2 is a refusal whose reason is stderr.
// - Only the tools a rule reads are sent (edit tools before, bash and velesdb-memory MCP tools
//   after), as the matchers of the other hosts' registries do; bash's `metadata.output` (a
//   second copy of the output) is left out of the payload.
// - OpenCode has no cap on continuations: the plugin marks the idle that follows a
//   continuation it started as `stop_hook_active`, and the Stop rule passes on it.

import { editToolsMatcher, type HostDescriptor, velesdbToolsMatcher } from "../../hosts/descriptors/descriptor.ts";
import { OPENCODE } from "../../hosts/opencode.ts";
import type { OpencodeLike } from "../../hosts/descriptors/opencode.ts";

/**
 * hookTimeoutMs(OPENCODE) → the timeout each hook call of a plugin or extension gets, in ms: its
 * descriptor's post-tool-use timeout (compression keeps its deadline inside it).
 */
export function hookTimeoutMs(descriptor: HostDescriptor): number {
  const timeoutS = descriptor.events["post-tool-use"]?.timeoutS;
  if (timeoutS === undefined) throw new Error(`${descriptor.name} has no post-tool-use timeout to bound its spawns`);
  return timeoutS * 1000;
}

/**
 * askFunctionSource(OPENCODE) → the module's `ask(event, payload)`: one bounded synchronous
 * spawn of `BINARY <host> <event>` and its answer as an object ({} on any failure; exit 2 a
 * refusal whose reason is stderr). Shared with Pi's extension (pi-extension.ts).
 */
export function askFunctionSource(descriptor: HostDescriptor): string {
  return `function ask(event, payload) {
  let run;
  try {
    run = spawnSync(BINARY, [${JSON.stringify(descriptor.name)}, event], { input: JSON.stringify(payload), encoding: "utf8", timeout: ${hookTimeoutMs(descriptor)}, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024, windowsHide: true });
  } catch {
    return {};
  }
  if (run.error || run.signal) return {};
  if (run.status === 2) return { deny: String(run.stderr || "").trim() || "refused by velesdb-hooks" };
  try {
    const answer = JSON.parse(run.stdout);
    return answer !== null && typeof answer === "object" && !Array.isArray(answer) ? answer : {};
  } catch {
    return {};
  }
}`;
}

/**
 * opencodePluginBody(binaryPath, OPENCODE) → the module's code, the binary's path written as a
 * JSON string literal. The descriptor names the first argument of every spawn and the tools sent
 * on: OpenCode's, or Kilo Code's for the fork that loads the same plugin from its own directory
 * (src/install/clients/kilo.ts).
 */
export function opencodePluginBody(binaryPath: string, descriptor: OpencodeLike = OPENCODE): string {
  const shell = JSON.stringify(descriptor.shellTool);
  return `import { spawnSync } from "node:child_process";

const BINARY = ${JSON.stringify(binaryPath)};
const EDIT_TOOLS = /${editToolsMatcher(descriptor)}/;
const AFTER_TOOLS = /${velesdbToolsMatcher(descriptor)}/;

${askFunctionSource(descriptor)}

const text = (value) => (typeof value === "string" && value !== "" ? value : undefined);

export const VelesdbHooks = async ({ client, directory }) => {
  const contextBySession = new Map();
  const compacted = new Set();
  const continued = new Set();
  const base = (sessionID) => ({ session_id: sessionID, cwd: directory });
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const id = input?.sessionID;
      if (typeof id !== "string" || !Array.isArray(output?.system)) return;
      if (!contextBySession.has(id)) {
        const source = compacted.delete(id) ? "compact" : "startup";
        contextBySession.set(id, text(ask("session-start", { ...base(id), source }).system));
      }
      const context = contextBySession.get(id);
      if (context !== undefined) output.system.push(context);
    },
    "tool.execute.before": async (input, output) => {
      if (!EDIT_TOOLS.test(String(input?.tool))) return;
      const answer = ask("pre-tool-use", { ...base(input.sessionID), tool_name: input.tool, tool_input: output?.args });
      if (text(answer.deny) !== undefined) throw new Error(answer.deny);
    },
    "tool.execute.after": async (input, output) => {
      if (!AFTER_TOOLS.test(String(input?.tool)) || output === null || typeof output !== "object") return;
      const { metadata, ...rest } = output;
      const response = input.tool === ${shell} && metadata && typeof metadata === "object" ? { ...rest, metadata: { exit: metadata.exit, truncated: metadata.truncated, outputPath: metadata.outputPath } } : output;
      const answer = ask("post-tool-use", { ...base(input.sessionID), tool_name: input.tool, tool_input: input.args, tool_response: response });
      if (input.tool === ${shell} && text(answer.output) !== undefined) output.output = answer.output;
    },
    "experimental.session.compacting": async (input, output) => {
      if (typeof input?.sessionID !== "string" || !Array.isArray(output?.context)) return;
      const context = text(ask("pre-compact", base(input.sessionID)).context);
      if (context !== undefined) output.context.push(context);
    },
    event: async ({ event }) => {
      const id = event?.properties?.sessionID;
      if (typeof id !== "string") return;
      if (event.type === "session.compacted") {
        contextBySession.delete(id);
        compacted.add(id);
        return;
      }
      if (event.type !== "session.idle") return;
      const active = continued.delete(id);
      const prompt = text(ask("stop", { ...base(id), stop_hook_active: active }).prompt);
      if (prompt === undefined) return;
      continued.add(id);
      try {
        await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text: prompt }] } });
      } catch {
        continued.delete(id);
      }
    },
  };
};`;
}
