// The DeepSeek harness through its Codex hook bridge `@deepseek-ai/dsh-hooks-codex` (docs/contract.md §4.4).
// Codex-dialect answers, with the bridge's quirks absorbed here:
// - `stop_hook_active` is always false and there is no continuation cap: a Stop that cannot
//   prove its marker persisted must pass, or the session never ends.
// - Hooks may run where /tmp is private to each hook process and $HOME is read-only, so state
//   lives in the workspace (`<cwd>/.velesdb-hooks/state`) unless VELESDB_HOOKS_STATE_DIR says
//   otherwise.
// - `tool_input` is always `{command}` (empty for edit/write), so the guard cannot see paths:
//   the session cwd's policy decides.
// - `tool_response` is plain text: a recall counts only when it parses as a JSON array or an
//   object without `error`.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import * as path from "node:path";
import { pass, type Decision } from "../core/decision.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { stringField } from "../core/payload.ts";
import { createExclusiveFile } from "../core/state.ts";
import { encodeCodexAnswer } from "./codex.ts";
import { DSH } from "./descriptors/dsh.ts";
import { eventsOf, mcpToolOf, SESSION_START_EVENT, STOP_EVENT, type HostModule } from "./host.ts";
import { recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { DSH };

const WORKSPACE_STATE_DIR = ".velesdb-hooks";

// The harness's own file tools (the descriptor's); its shell is `bash`, which is not an edit.
async function dshPreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  if (tool === undefined || !Object.hasOwn(DSH.editTools, tool)) return pass(input.inputProblem);
  return guardEditDecision(input, []);
}

async function dshPostToolUse(input: HookInput): Promise<Decision> {
  return recordEvidenceAndPass(input, {
    toolName: input.payload.tool_name,
    toolInput: input.payload.tool_input,
    toolResponse: input.payload.tool_response,
    form: "text",
  });
}

export const dsh: HostModule = {
  descriptor: DSH,
  profile: {
    name: "dsh",
    statePrefix: "dsh-",
    // The bridge hands the harness's MCP tools over as `mcp__<server>__<tool>` (its PostToolUse
    // tool_name, fixtures/payloads/dsh/post-tool-use.recall-fused.json; test/hosts/dsh/dsh-bridge.e2e.test.ts).
    mcpTool: mcpToolOf(DSH),
    stateDirectory: (env, cwd) => {
      const override = env.VELESDB_HOOKS_STATE_DIR;
      return override !== undefined && override !== "" ? override : path.join(cwd, WORKSPACE_STATE_DIR, "state");
    },
    // Workspace state is created inside an existing workspace only: a payload cwd that does not
    // exist makes state unavailable rather than a directory chain we were never asked to create.
    stateAnchor: (env, cwd) => (env.VELESDB_HOOKS_STATE_DIR ? undefined : cwd),
    // State in the workspace must not end up in the user's commits (`git add -A` by an agent
    // would take it): the folder ignores itself, as build tools' cache folders do. Only a
    // folder this hook just created gets one, and only as a new file: a `.velesdb-hooks`
    // that came with the repository is the repository's business.
    onStateCreated: (store, env) => {
      const workspaceStateDir = path.dirname(store.dir);
      if (env.VELESDB_HOOKS_STATE_DIR || path.basename(workspaceStateDir) !== WORKSPACE_STATE_DIR) return;
      if (!store.createdDirectories.includes(workspaceStateDir)) return;
      createExclusiveFile(
        path.join(workspaceStateDir, ".gitignore"),
        "# velesdb-hooks session state (DeepSeek harness)\n*\n",
      );
    },
    stopFlagUnreliable: true,
    sessionIdField: "session_id",
    checkpointsEdits: true,
  },
  payloadNamesEvent: true,
  events: eventsOf(DSH, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-tool-use": { failure: "closed", run: dshPreToolUse },
    "post-tool-use": { failure: "open", run: dshPostToolUse },
  }),
  encode: encodeCodexAnswer,
};
