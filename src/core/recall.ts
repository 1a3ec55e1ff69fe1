// Recall evidence (docs/contract.md §6.2, §4.3, §4.4): does this PostToolUse payload show a velesdb-memory
// recall that ran and answered? A "yes" unlocks edits for a (session, repository), so every
// doubt reads as "no": an unknown name, an odd shape, an error flag, an empty answer. A false
// "no" costs one more recall; a false "yes" lets an edit through unchecked. Nothing here throws,
// whatever the payload holds: a crash would turn every odd recall into a hook error line.
import { RECALL_TOOL_NAMES, SCOPED_RECALL_TOOL } from "./velesdb-tools.ts";
import { isPlainObject } from "./payload.ts";

/** The project a recall was scoped to. `project` is undefined when the scope names no valid project. */
export type RecallScope =
  | { readonly present: false }
  | { readonly present: true; readonly project: string | undefined };

export interface RecallVerdict {
  readonly successful: boolean;
  /** A short phrase for one stderr diagnostic line, e.g. "isError is true". */
  readonly why: string;
  readonly scope: RecallScope;
}

/** How the host hands over the tool result: MCP content (Claude, Codex) or plain text (dsh, Windsurf). */
export type RecallResponseForm = "structured" | "text";

// The tools whose successful answer proves the agent looked at memory: the list the installer's
// matchers let through (src/core/velesdb-tools.ts). compile_context is one only with
// a memory_scope (it compiles the given text otherwise, without reading memory).
const RECALL_TOOLS: ReadonlySet<string> = recallTools();

// Without Array.prototype.filter: every hook evaluates this module (src/hosts/loaders.ts), and an
// array builtin's first call in a process costs ~0.1 M instructions, about 1.5% of the I/O floor
// (docs/performance/2026-12-02-bench-guard.md, "First calls").
function recallTools(): Set<string> {
  const tools = new Set(RECALL_TOOL_NAMES);
  tools.delete(SCOPED_RECALL_TOOL);
  return tools;
}

// The server name in either spelling, optionally behind a Claude plugin prefix whose plugin name
// has no underscore; the same shape as the Claude PostToolUse matcher (docs/contract.md §4.1), so what the
// host sends us is exactly what this rule recognises.
const VELESDB_TOOL_NAME = /^mcp__(?:plugin_[^_]+_)?velesdb[-_]memory__(.+)$/;

const NO_SCOPE: RecallScope = { present: false };

/** bareVelesdbToolName("mcp__velesdb_memory__recall_fused") → "recall_fused"; undefined for another server. */
export function bareVelesdbToolName(toolName: unknown): string | undefined {
  // Only an MCP tool can be one: a Read or an Edit result never compiles the pattern below.
  if (typeof toolName !== "string" || !toolName.startsWith("mcp__")) return undefined;
  return VELESDB_TOOL_NAME.exec(toolName)?.[1];
}

/**
 * isVelesdbRecallToolName("mcp__velesdb-memory__recall") → true when the name can be a recall.
 * True for compile_context as well: whether that call counts depends on its input, which
 * classifyRecall checks. Hosts use this to skip every other tool before reading anything else.
 */
export function isVelesdbRecallToolName(toolName: string): boolean {
  const bare = bareVelesdbToolName(toolName);
  return bare !== undefined && (RECALL_TOOLS.has(bare) || bare === SCOPED_RECALL_TOOL);
}

/**
 * mcpToolName("velesdb-memory", "recall") → "mcp__velesdb-memory__recall".
 * Windsurf sends the server and the tool as two fields; joining them lets one name rule serve
 * every host. Undefined when either part is not a non-empty string.
 */
export function mcpToolName(serverName: unknown, toolName: unknown): string | undefined {
  if (typeof serverName !== "string" || serverName === "") return undefined;
  if (typeof toolName !== "string" || toolName === "") return undefined;
  return `mcp__${serverName}__${toolName}`;
}

/**
 * classifyRecall(tool_name, tool_input, tool_response, "structured") → { successful, why, scope }.
 * "structured": Claude's content array or Codex's `{content, isError}`. "text": the string the
 * DeepSeek bridge and Windsurf pass. The scope is read whether or not the recall succeeded.
 */
export function classifyRecall(
  toolName: unknown,
  toolInput: unknown,
  toolResponse: unknown,
  responseForm: RecallResponseForm,
): RecallVerdict {
  // Payloads come from JSON.parse, which cannot build a throwing getter; the catch keeps the
  // never-throws promise for values built any other way. Failing means "no evidence", the safe side.
  try {
    const input = isPlainObject(toolInput) ? toolInput : undefined;
    const scope = recallScope(input);
    const verdict = (successful: boolean, why: string): RecallVerdict => ({ successful, why, scope });

    const bare = bareVelesdbToolName(toolName);
    if (bare === undefined) return verdict(false, "not a velesdb-memory tool");
    if (bare === SCOPED_RECALL_TOOL) {
      const memoryScope = input?.memory_scope;
      if (memoryScope === undefined || memoryScope === null)
        return verdict(false, "compile_context without memory_scope");
    } else if (!RECALL_TOOLS.has(bare)) {
      return verdict(false, `${bare} is not a recall tool`);
    }

    const response = readResponse(toolResponse, responseForm);
    return verdict(response.ok, `${bare}: ${response.why}`);
  } catch {
    return { successful: false, why: "response could not be inspected", scope: NO_SCOPE };
  }
}

interface ResponseReading {
  readonly ok: boolean;
  readonly why: string;
}

/** readResponse(tool_response, "text") → whether the response shows an answer, and why. */
function readResponse(response: unknown, form: RecallResponseForm): ResponseReading {
  if (form === "structured") return structuredResponse(response);
  if (form === "text") return textResponse(response);
  return missing("unknown response form");
}

/**
 * structuredResponse([{type:"text",text:"[]"}]) → ok; also `{content:[…], isError:false}`, and
 * a bare JSON string. Each text block must read as a recall result by the same rule as the text
 * hosts: free text may be an error message.
 *
 * The bare string is Claude Code's form for a server that answers with structuredContent, as
 * velesdb-memory's recall tools do (rmcp Json<T>): 2.1.328–2.1.332 hand the hook the
 * structuredContent serialised, not the content array — unless an account flag switches it to
 * the server's blocks, so one user gets a string and another an array
 * (docs/how-it-works.md#what-counts-as-a-recall-per-host-measured). The string
 * is read exactly like a text host's answer: JSON object without `error`, or JSON array. A bare
 * "ok" is still no recall (it once unlocked edits, docs/decisions.md#the-learning-loop).
 */
function structuredResponse(response: unknown): ResponseReading {
  if (typeof response === "string") {
    const reading = textResponse(response);
    return { ok: reading.ok, why: `a bare string: ${reading.why}` };
  }
  if (Array.isArray(response)) return contentBlocks(response);
  if (!isPlainObject(response)) return missing("the response is not a content array or object");
  // Only `false` (or no flag) clears a response: a flag of any other value is a doubt.
  for (const flag of ["isError", "is_error"]) {
    const value = response[flag];
    if (value === true) return missing(`${flag} is true`);
    if (value !== undefined && value !== null && value !== false) return missing(`${flag} is not false`);
  }
  // The key counts whatever its value (docs/contract.md §6.2: "an error field"). Should a server ever send
  // `error: null` on success, the cost is one more recall, never a wrong unlock.
  if (Object.hasOwn(response, "error")) return missing("the response has an error field");
  if (!Array.isArray(response.content)) return missing("the response has no content array");
  return contentBlocks(response.content);
}

/**
 * contentBlocks([{type:"text",text:"[]"}]) → ok when at least one text block is non-blank and
 * every non-blank text block reads as a recall result (textResponse); one doubtful block is enough
 * to refuse. Blocks of other types (images) carry no verdict either way.
 */
function contentBlocks(blocks: readonly unknown[]): ResponseReading {
  if (blocks.length === 0) return missing("the content array is empty");
  let texts = 0;
  for (const [index, block] of blocks.entries()) {
    if (!isPlainObject(block) || block.type !== "text" || !hasText(block.text)) continue;
    const reading = textResponse(block.text);
    if (!reading.ok) return missing(`text block ${index + 1}: ${reading.why}`);
    texts += 1;
  }
  // "[]" is a recall that ran and found nothing: it still counts.
  return texts > 0 ? found(texts === 1 ? "1 text block" : `${texts} text blocks`) : missing("no non-empty text block");
}

/**
 * textResponse('{"results":[]}') → ok. The text hosts lose the MCP error flag when they join
 * the blocks into a string, so structure is the only proof left: the text must be a JSON array,
 * or a JSON object without an `error` key. Free text could be an error message and never counts.
 */
function textResponse(response: unknown): ResponseReading {
  if (typeof response !== "string") return missing("the response is not text");
  if (!hasText(response)) return missing("the text response is empty");
  let parsed: unknown;
  try {
    parsed = JSON.parse(response);
  } catch {
    return missing("the text is not JSON");
  }
  if (Array.isArray(parsed)) return found("a JSON array");
  if (!isPlainObject(parsed)) return missing("the text is JSON but not an array or object");
  if (Object.hasOwn(parsed, "error")) return missing("the JSON has an error key");
  return found("a JSON object");
}

/**
 * recallScope({filter:{project:"demo"}}) → { present: true, project: "demo" }.
 * The scope is `filter.project` or `memory_scope.project`; "present" means the key exists. When
 * both exist and disagree, or either is not a non-empty string, the project is undefined, so a
 * scope the caller cannot trust matches no repository instead of the wrong one.
 */
function recallScope(input: Record<string, unknown> | undefined): RecallScope {
  if (input === undefined) return NO_SCOPE;
  const named: unknown[] = [];
  for (const holder of [input.filter, input.memory_scope]) {
    if (isPlainObject(holder) && Object.hasOwn(holder, "project")) named.push(holder.project);
  }
  if (named.length === 0) return NO_SCOPE;
  const first = named[0];
  const valid = typeof first === "string" && first !== "" && named.every((project) => project === first);
  return { present: true, project: valid ? first : undefined };
}

function hasText(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

const found = (why: string): ResponseReading => ({ ok: true, why });
const missing = (why: string): ResponseReading => ({ ok: false, why });
