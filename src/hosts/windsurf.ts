// Windsurf Cascade (docs/contract.md §4.3; measured by others, not by us). Quirks that shape this host:
// - Hook stdout reaches neither the model nor the user, so load/save guidance goes through the
//   global rules file the installer writes; pre_user_prompt prints its reminder only for parity.
// - A pre- hook that exits 2 blocks the action and Cascade shows stderr to the agent: that is
//   the only refusal channel, so the guard's reason goes to stderr with exit 2.
// - The payload has `trajectory_id` (the session), `tool_info`, and no `cwd`: the process cwd
//   is the workspace root.
// - There is no Stop event: no checkpoint could ever be delivered, so no edit queue is kept,
//   and a Stop-shaped decision maps to a pass.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { diagnosticLine, exitTwoDeny, type Decision, type HookAnswer } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { objectField, stringField } from "../core/payload.ts";
import { mcpToolName } from "../core/recall.ts";
import { defaultStateDirectory } from "../core/state.ts";
import { WINDSURF } from "./descriptors/windsurf.ts";
import { eventsOf, mcpToolOf, type HostModule } from "./host.ts";
import { recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { WINDSURF };

function encodeWindsurfAnswer(_wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "addContext":
      return { stdout: `${decision.text}\n`, stderr: diagnosticLine(decision.note), exitCode: 0 };
    case "deny":
      return exitTwoDeny(decision.reason);
    case "pass":
    case "continue":
    case "replaceOutput":
    case "summariserInstructions":
      return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
    default:
      return decision satisfies never;
  }
}

/** pre_write_code: the recall-before-edit guard on `tool_info.file_path`. */
async function windsurfPreWriteCode(input: HookInput): Promise<Decision> {
  const target = stringField(objectField(input.payload, "tool_info") ?? {}, "file_path");
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

/** post_mcp_tool_use: recall evidence from the `mcp_result` text. */
async function windsurfPostMcpToolUse(input: HookInput): Promise<Decision> {
  const info = objectField(input.payload, "tool_info") ?? {};
  return recordEvidenceAndPass(input, {
    toolName: mcpToolName(info.mcp_server_name, info.mcp_tool_name),
    toolInput: info.mcp_tool_arguments,
    toolResponse: info.mcp_result,
    form: "text",
  });
}

export const windsurf: HostModule = {
  descriptor: WINDSURF,
  profile: {
    name: "windsurf",
    statePrefix: "windsurf-",
    // Not measured (no Cascade runs here): its hook payload names server and tool apart
    // (mcp_server_name, mcp_tool_name), so the bare tool name is what we can stand behind.
    mcpTool: mcpToolOf(WINDSURF),
    stateDirectory: (env) => defaultStateDirectory(env),
    stopFlagUnreliable: true,
    sessionIdField: "trajectory_id",
    checkpointsEdits: false,
  },
  payloadNamesEvent: false,
  events: eventsOf(WINDSURF, {
    // The reminder once per trajectory (the core's rule; the trajectory is the session).
    "pre-user-prompt": {
      failure: "open",
      run: async (input) => (await import("../core/lifecycle.ts")).promptReminderDecision(input),
    },
    "pre-write-code": { failure: "closed", run: windsurfPreWriteCode },
    "post-mcp-tool-use": { failure: "open", run: windsurfPostMcpToolUse },
  }),
  encode: encodeWindsurfAnswer,
};
