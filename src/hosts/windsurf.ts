// Windsurf Cascade (SPEC §4.3; measured by others, not by us). Quirks that shape this host:
// - Hook stdout reaches neither the model nor the user, so load/save guidance goes through the
//   global rules file the installer writes; pre_user_prompt prints its reminder only for parity.
// - A pre- hook that exits 2 blocks the action and Cascade shows stderr to the agent: that is
//   the only refusal channel, so the guard's reason goes to stderr with exit 2.
// - The payload has `trajectory_id` (the session), `tool_info`, and no `cwd`: the process cwd
//   is the workspace root.
// - There is no Stop event: no checkpoint could ever be delivered, so no edit queue is kept,
//   and a Stop-shaped decision maps to a pass.
import { diagnosticLine, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import { recordRecallEvidence } from "../core/evidence.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { resolveProjectIdentity } from "../core/identity.ts";
import { objectField, stringField } from "../core/payload.ts";
import { mcpToolName } from "../core/recall.ts";
import { defaultStateDirectory, markerPath, readPrivateFile, writePrivateFile } from "../core/state.ts";
import { windsurfPromptReminder } from "../core/texts.ts";
import type { HostModule } from "./host.ts";
import { joinNotes } from "./tool-events.ts";

function encodeWindsurfAnswer(_wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "addContext":
      return { stdout: `${decision.text}\n`, stderr: diagnosticLine(decision.note), exitCode: 0 };
    case "deny":
      return { stdout: "", stderr: `${decision.reason}\n`, exitCode: 2 };
    case "pass":
    case "continue":
    case "replaceOutput":
    case "summariserInstructions":
      return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
    default:
      return decision satisfies never;
  }
}

/** pre_user_prompt: the reminder once per trajectory, then silence. */
function windsurfPreUserPrompt(input: HookInput): Decision {
  const identity = resolveProjectIdentity(input.cwd);
  const reminder: Decision = { kind: "addContext", text: windsurfPromptReminder(identity), note: input.inputProblem };
  if (input.sessionId === undefined) return reminder;
  const store = input.state();
  if (!store.safe) return reminder;
  const marker = markerPath(store, input.kind("prompt"), input.sessionId);
  if (readPrivateFile(marker).state !== "absent") return pass(input.inputProblem);
  writePrivateFile(marker, "1\n");
  return reminder;
}

/** pre_write_code: the recall-before-edit guard on `tool_info.file_path`. */
function windsurfPreWriteCode(input: HookInput): Decision {
  const target = stringField(objectField(input.payload, "tool_info") ?? {}, "file_path");
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

/** post_mcp_tool_use: recall evidence from the `mcp_result` text. */
function windsurfPostMcpToolUse(input: HookInput): Decision {
  const info = objectField(input.payload, "tool_info") ?? {};
  const note = recordRecallEvidence(input, {
    toolName: mcpToolName(info.mcp_server_name, info.mcp_tool_name),
    toolInput: info.mcp_tool_arguments,
    toolResponse: info.mcp_result,
    form: "text",
  });
  return pass(joinNotes(input.inputProblem, note));
}

export const windsurf: HostModule = {
  profile: {
    name: "windsurf",
    statePrefix: "windsurf-",
    stateDirectory: (env) => defaultStateDirectory(env),
    stopFlagUnreliable: true,
    sessionIdField: "trajectory_id",
    checkpointsEdits: false,
  },
  payloadNamesEvent: false,
  events: {
    "pre-user-prompt": { wireName: "pre_user_prompt", run: windsurfPreUserPrompt },
    "pre-write-code": { wireName: "pre_write_code", run: windsurfPreWriteCode },
    "post-mcp-tool-use": { wireName: "post_mcp_tool_use", run: windsurfPostMcpToolUse },
  },
  encode: encodeWindsurfAnswer,
};
