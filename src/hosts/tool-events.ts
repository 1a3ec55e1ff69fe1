// The tool events Claude Code and Codex share in shape: PostToolUse payloads carry
// `tool_name`, `tool_input` and `tool_response`, and the recall-evidence rule reads them the
// same way for both (the response differs only in envelope, which classifyRecall absorbs).
//
// Only a velesdb-memory recall can be evidence, and most tool calls are something else (a Read,
// a Bash command, an edit): the rule (evidence.ts, with identity, records and state) is loaded
// once the tool's name says it may be one. Loaded with this module, it cost every PostToolUse
// and every edit-guard pass of Qwen and Droid its chunks (docs/performance/2026-12-02-io-floor.md:
// Qwen's PreToolUse for a
// read_file 9.7 -> 9.2 ms of CPU, and below the heap at which the engine starts a warm-up thread).
// Kept when the sub-millisecond splits were folded back: Claude's PostToolUse of a Read, the hook
// it spares most often, already sits at the 1.15× bound under load
// (docs/performance/2026-12-02-fold-backs.md).
import { joinNotes, pass, type Decision } from "../core/decision.ts";
import type { ToolCall } from "../core/evidence.ts";
import { guardEditDecision } from "../core/guard.ts";
import type { HookInput } from "../core/hook-input.ts";
import { isPlainObject, objectField, stringField } from "../core/payload.ts";
import { isVelesdbRecallToolName, mcpToolName } from "../core/recall.ts";

/** recordEvidence(input, call) → the note of recording the recall `call` shows; "" for any tool that cannot be one. */
async function recordEvidence(input: HookInput, call: ToolCall): Promise<string> {
  // The rule's own first test (evidence.ts), made before its chunk is loaded.
  if (typeof call.toolName !== "string" || !isVelesdbRecallToolName(call.toolName)) return "";
  const { recordRecallEvidence } = await import("../core/evidence.ts");
  return recordRecallEvidence(input, call);
}

/** PostToolUse that only records evidence (Claude and Codex, for every tool but their shell). */
export async function evidenceOnlyPostToolUse(input: HookInput): Promise<Decision> {
  return recordEvidenceAndPass(input, {
    toolName: input.payload.tool_name,
    toolInput: input.payload.tool_input,
    toolResponse: input.payload.tool_response,
    form: "structured",
  });
}

/** recordEvidenceAndPass(input, call) → records the recall `call` shows, then the host's pass. */
export async function recordEvidenceAndPass(input: HookInput, call: ToolCall): Promise<Decision> {
  return pass(joinNotes(input.inputProblem, await recordEvidence(input, call)));
}

/**
 * evidenceFromSpelledMcpTool(input, /^(velesdb[-_]memory)___(.+)$/) → recall evidence when the
 * payload's `tool_name` is a velesdb-memory tool as the host spells MCP names (server, then tool,
 * split by the pattern's two groups), its `tool_response` read as Claude's (structured or bare
 * string); any other tool passes.
 */
export async function evidenceFromSpelledMcpTool(input: HookInput, spelling: RegExp): Promise<Decision> {
  const spelled = spelling.exec(stringField(input.payload, "tool_name") ?? "");
  if (!spelled) return pass(input.inputProblem);
  return recordEvidenceAndPass(input, {
    toolName: mcpToolName(spelled[1], spelled[2]),
    toolInput: input.payload.tool_input,
    toolResponse: input.payload.tool_response,
    form: "structured",
  });
}

/**
 * mcpResultOfLlmContent({llmContent:[{text:"[]"}], returnDisplay:"[]"}) → `{content:[{type:"text",
 * text:"[]"}]}`: the `{llmContent, returnDisplay, error?}` tool response of Gemini CLI and of
 * its fork Qwen Code as the MCP result the core's recall rule reads. llmContent is parts or a
 * string; `unwrapText` strips a host's own wrapper so the text is the server's. An `error` key is
 * kept, so a failed call stays a failure; a part without text and a missing llmContent become no
 * text at all (no evidence); a non-object is handed over as it is, and fails there.
 */
export function mcpResultOfLlmContent(
  toolResponse: unknown,
  unwrapText: (text: string) => string = (text) => text,
): unknown {
  if (!isPlainObject(toolResponse)) return toolResponse;
  const { llmContent } = toolResponse;
  const parts = Array.isArray(llmContent) ? llmContent : typeof llmContent === "string" ? [{ text: llmContent }] : [];
  const content = parts.map((part) =>
    isPlainObject(part) && typeof part.text === "string"
      ? { type: "text", text: unwrapText(part.text) }
      : { type: "non-text" },
  );
  return Object.hasOwn(toolResponse, "error") ? { content, error: toolResponse.error } : { content };
}

/**
 * guardNamedEditTool(input, {Edit: "file_path"}) → the recall-before-edit guard on the target
 * the edit tool names in `tool_input[field]`; a pass for every tool the table does not list.
 * Claude-shaped hosts differ only in the table (Claude's Edit/Write/NotebookEdit, Qwen's
 * edit/write_file/notebook_edit).
 */
export async function guardNamedEditTool(
  input: HookInput,
  targetFieldByTool: Readonly<Record<string, string>>,
): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const field = tool !== undefined && Object.hasOwn(targetFieldByTool, tool) ? targetFieldByTool[tool] : undefined;
  if (field === undefined) return pass(input.inputProblem);
  const target = stringField(objectField(input.payload, "tool_input") ?? {}, field);
  return guardEditDecision(input, target === undefined ? [] : [target]);
}
