// Payload builders for the learning-loop tests: the same shapes as fixtures/payloads, with
// the fields each scenario varies (session, cwd, targets, recall response) as arguments.
import { type HookAnswer, loadPayload } from "./hook-runner.ts";

export type Host = "claude" | "codex";

/** What the learning-loop helpers read of an answer (hook-runner.ts HookAnswer). */
export type Answer = Pick<HookAnswer, "json" | "stderr" | "exitCode">;

/** An edit payload: Claude Write/Edit/NotebookEdit with one target, Codex apply_patch with several. */
export function editPayload(
  host: Host,
  session: string | undefined,
  cwd: string,
  targets: string[],
  tool?: string,
): Record<string, unknown> {
  const base =
    host === "claude"
      ? loadPayload("claude", "pre-tool-use.write", {
          cwd,
          tool_name: tool ?? "Write",
          tool_input:
            tool === "NotebookEdit"
              ? { notebook_path: targets[0], new_source: "x" }
              : { file_path: targets[0], content: "x\n" },
        })
      : loadPayload("codex", "pre-tool-use.apply-patch", {
          cwd,
          tool_input: {
            command: `*** Begin Patch\n${targets.map((t) => `*** Update File: ${t}\n@@\n-a\n+b`).join("\n")}\n*** End Patch`,
          },
        });
  if (session === undefined) delete base.session_id;
  else base.session_id = session;
  return base;
}

/**
 * A successful recall (or whatever response is given) as the host's PostToolUse payload. The
 * default response is the fixture's: what the host handed the hook for velesdb-memory's real
 * answer (re-captured through the recall matrix: Claude's bare JSON string, Codex's
 * `{content, structuredContent, isError}`).
 */
export function recallPayload(
  host: Host,
  session: string,
  cwd: string,
  options: { tool?: string; input?: Record<string, unknown>; response?: unknown } = {},
): Record<string, unknown> {
  const tool = options.tool ?? "recall_fused";
  if (host === "claude") {
    return loadPayload("claude", "post-tool-use.recall-fused", {
      session_id: session,
      cwd,
      tool_name: `mcp__velesdb-memory__${tool}`,
      tool_input: options.input ?? { query: "prior patterns" },
      ...(options.response === undefined ? {} : { tool_response: options.response }),
    });
  }
  return loadPayload("codex", "post-tool-use.recall-fused", {
    session_id: session,
    cwd,
    tool_name: `mcp__velesdb_memory__${tool}`,
    tool_input: options.input ?? { query: "prior patterns" },
    ...(options.response === undefined ? {} : { tool_response: options.response }),
  });
}

export function stopPayload(host: Host, session: string, cwd: string, active = false): Record<string, unknown> {
  return loadPayload(host, "stop.first", { session_id: session, cwd, stop_hook_active: active });
}

export function isDeny(answer: Answer): boolean {
  const specific = answer.json.hookSpecificOutput as Record<string, unknown> | undefined;
  return (
    specific?.permissionDecision === "deny" &&
    typeof specific.permissionDecisionReason === "string" &&
    specific.permissionDecisionReason !== ""
  );
}

export function denyReason(answer: Answer): string {
  return (
    ((answer.json.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecisionReason as string) ?? ""
  );
}

/** The Stop continuation text, whichever channel the host uses; undefined on a pass. */
export function continuation(host: Host, answer: Answer): string | undefined {
  if (host === "codex") return answer.json.decision === "block" ? (answer.json.reason as string) : undefined;
  const specific = answer.json.hookSpecificOutput as Record<string, unknown> | undefined;
  return typeof specific?.additionalContext === "string" ? specific.additionalContext : undefined;
}

/** The JSON array of repositories a checkpoint names. */
export function checkpointTargets(text: string | undefined): Array<{ project: string; session: string; root: string }> {
  const match = text?.match(/since the last checkpoint: (\[.*\])$/m);
  return match ? JSON.parse(match[1]!) : [];
}
