// A host's session transcript, read without the model (docs/working-context.md#transcripts-per-host): at PreCompact and at Stop the
// hooks take the file the host names (`transcript_path`, Copilot's `transcriptPath`), turn it into
// velesdb-memory's compile_transcript JSONL (every non-empty line `{"role": string, "content":
// string}`, velesdb-memory 0.17.0 src/context/segment.rs `JsonlLine`; one other line and the
// server reads the whole text as plain, marker-split text instead) and send it inline.
//
// Each host writes its own format, measured from the files the real CLIs wrote
// (fixtures/transcripts/<host>/, scripts/capture-transcripts.ts, docs/working-context.md
// "Transcripts, per host"). What becomes a turn, for every format: the user's prompts, the
// assistant's texts, each tool call as one short turn ("Bash: cat notes.txt") and each tool
// result as another (its first TOOL_RESULT_MAX_BYTES). Dropped: thinking and reasoning, system
// and developer preambles, context the host or a hook injected (whole-tag user messages such as
// `<environment_context>`, `<system-reminder>` and `<hook_context>` blocks), hook records.
// After a compaction only what the model kept counts (Claude's compact_boundary, Codex's
// `compacted`). A line that does not parse, or that has no known shape, is skipped: a host adds
// record types between releases, and the file's last line may be half written.
import * as fs from "node:fs";

export type TurnRole = "user" | "assistant" | "tool" | "system";

export interface TranscriptTurn {
  readonly role: TurnRole;
  readonly content: string;
}

/** The transcript formats, one per writer; a host writing the same format as another shares its key. */
export type TranscriptFormat =
  | "claude-jsonl"
  | "codex-rollout"
  | "gemini-jsonl"
  | "qwen-jsonl"
  | "droid-jsonl"
  | "codebuddy-jsonl"
  | "copilot-events";

/** The format of the file each host names in its hook payload (docs/working-context.md, "Transcripts, per host"). */
export const TRANSCRIPT_FORMAT_OF_HOST = {
  claude: "claude-jsonl",
  codex: "codex-rollout",
  gemini: "gemini-jsonl",
  qwen: "qwen-jsonl",
  droid: "droid-jsonl",
  codebuddy: "codebuddy-jsonl",
  copilot: "copilot-events",
} as const satisfies Record<string, TranscriptFormat>;

/** isTranscriptFormat(profile.transcriptFormat) → it names a format this module reads (host profiles spell it as a plain string). */
export function isTranscriptFormat(format: string): format is TranscriptFormat {
  return (Object.values(TRANSCRIPT_FORMAT_OF_HOST) as string[]).includes(format);
}

/** A tool call becomes "<name>: <command, path or arguments>", at most this many bytes. */
export const TOOL_CALL_MAX_BYTES = 1024;
/** A tool result becomes "<name> result: <output>", at most this many bytes (the start of the output). */
export const TOOL_RESULT_MAX_BYTES = 2048;
/** compileTranscriptInput cuts any one turn to this many bytes of JSONL line, so one pasted log cannot take the whole budget. */
export const MAX_TURN_BYTES = 16 * 1024;
/**
 * compileTranscriptInput keeps at most this many turns: each JSONL turn is one segment (one
 * fragment) and velesdb-memory 0.17.0 refuses a transcript of more than MAX_FRAGMENTS = 1 024
 * (src/limits.rs:175, checked in src/context/segment.rs `segment_transcript`).
 */
export const MAX_TRANSCRIPT_TURNS = 1024;

// ---- Converting -----------------------------------------------------------------------------------

/**
 * transcriptTurns("claude-jsonl", text) → the conversation's turns, oldest first. Never throws:
 * lines that are not JSON, or not a record this format knows, are skipped.
 */
export function transcriptTurns(format: TranscriptFormat, text: string): TranscriptTurn[] {
  if (typeof text !== "string") return [];
  const records = jsonLines(text);
  switch (format) {
    case "claude-jsonl":
      return claudeTurns(records);
    case "codex-rollout":
      return codexTurns(records);
    case "gemini-jsonl":
      return geminiTurns(records);
    case "qwen-jsonl":
      return qwenTurns(records);
    case "droid-jsonl":
      return droidTurns(records);
    case "codebuddy-jsonl":
      return codebuddyTurns(records);
    case "copilot-events":
      return copilotTurns(records);
    default:
      format satisfies never;
      return [];
  }
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** jsonLines(text) → every line that parses as a JSON object; the rest (blank, torn, binary) skipped. */
function jsonLines(text: string): Json[] {
  const records: Json[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed[0] !== "{") continue;
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (isRecord(parsed)) records.push(parsed);
    } catch {
      // A torn or foreign line: skipped, the rest of the file still counts.
    }
  }
  return records;
}

/** The turns of one conversion, with the names of the tool calls seen so far (results name their call only by id). */
class Turns {
  readonly list: TranscriptTurn[] = [];
  private readonly toolNames = new Map<string, string>();

  say(role: "user" | "assistant", text: string | undefined): void {
    const content = role === "user" ? userText(text) : text?.trim();
    if (content) this.list.push({ role, content });
  }

  call(id: unknown, name: unknown, input: unknown): void {
    const tool = typeof name === "string" && name !== "" ? name : "tool";
    if (typeof id === "string") this.toolNames.set(id, tool);
    this.list.push({ role: "tool", content: cutUtf8(`${tool}: ${toolInputText(input)}`.trim(), TOOL_CALL_MAX_BYTES) });
  }

  result(id: unknown, name: unknown, output: string | undefined, isError = false): void {
    const text = output?.trim();
    if (!text) return;
    const tool =
      (typeof name === "string" && name !== "" ? name : undefined) ??
      (typeof id === "string" ? this.toolNames.get(id) : undefined) ??
      "tool";
    this.list.push({
      role: "tool",
      content: cutUtf8(`${tool} ${isError ? "error" : "result"}: ${text}`, TOOL_RESULT_MAX_BYTES),
    });
  }

  /** A compaction: what came before is now the summary the host keeps in its place. */
  reset(): void {
    this.list.length = 0;
  }
}

/** Keys that name what a tool call does, in the order they are looked for (shell commands, then paths, then searches). */
const INPUT_SUMMARY_KEYS = [
  "command",
  "cmd",
  "file_path",
  "path",
  "filePath",
  "absolute_path",
  "pattern",
  "query",
  "url",
];

/** toolInputText({command: "ls"}) → "ls"; a JSON string of arguments is read as its object; else compact JSON. */
function toolInputText(input: unknown): string {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      return input;
    }
  }
  if (!isRecord(value)) return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  for (const key of INPUT_SUMMARY_KEYS) {
    const found = value[key];
    if (typeof found === "string") return found;
    // Codex's older shell tool passes argv: ["bash", "-lc", "cat notes.txt"].
    if (Array.isArray(found) && found.every((part) => typeof part === "string")) return found.join(" ");
  }
  return JSON.stringify(value);
}

/** blockText(content) → the text of a string, or of the text blocks of an array ({type:"text", text}). */
function blockText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  const texts = asArray(content)
    .filter(isRecord)
    .map((block) => asString(block.text))
    .filter((text): text is string => text !== undefined);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

// ---- Injected context in user messages -------------------------------------------------------------

/**
 * Blocks a host or a hook splices into a user message: Claude Code and Factory Droid wrap their
 * reminders in <system-reminder>, Gemini CLI prefixes the prompt with SessionStart context in
 * <hook_context> (fixtures/transcripts/gemini/stop.jsonl).
 */
const INJECTED_BLOCKS = ["system-reminder", "hook_context"];

/**
 * userText(text) → the user's own words, or undefined when nothing is left: injected blocks are
 * cut out, and a message made only of tagged blocks is the host's context, not a prompt (Codex's
 * <environment_context> and <hook_prompt>, Gemini's <session_context>, Claude's
 * <local-command-stdout>). Scanned with indexOf, not a regex, so a hostile message costs linear time.
 */
function userText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let kept = text;
  for (const tag of INJECTED_BLOCKS) kept = withoutBlocks(kept, tag);
  kept = kept.trim();
  if (kept === "" || onlyTaggedBlocks(kept)) return undefined;
  // A removed block leaves its blank lines behind.
  return kept.replace(/\n{3,}/g, "\n\n");
}

/** withoutBlocks("a<x>b</x>c", "x") → "ac"; an unclosed block is kept as it is. */
function withoutBlocks(text: string, tag: string): string {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  let out = "";
  let from = 0;
  for (;;) {
    const start = text.indexOf(open, from);
    if (start < 0) break;
    const end = text.indexOf(close, start + open.length);
    if (end < 0) break;
    out += text.slice(from, start);
    from = end + close.length;
  }
  return out + text.slice(from);
}

/** onlyTaggedBlocks("<a x=\"1\">…</a>\n<b>…</b>") → true: nothing but whole `<tag …>…</tag>` blocks. */
function onlyTaggedBlocks(text: string): boolean {
  let at = 0;
  let blocks = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    if (at === text.length) return blocks > 0;
    if (text[at] !== "<") return false;
    const name = /^<([A-Za-z][\w-]*)[\s>]/.exec(text.slice(at, at + 80))?.[1];
    if (!name) return false;
    const end = text.indexOf(`</${name}>`, at);
    if (end < 0) return false;
    at = end + name.length + 3;
    blocks++;
  }
}

// ---- Claude Code and Factory Droid: Anthropic content blocks ----------------------------------------

/** contentBlocks(turns, role, content): text → a turn, tool_use → a call, tool_result → a result; thinking dropped. */
function contentBlocks(turns: Turns, role: "user" | "assistant", content: unknown): void {
  if (typeof content === "string") {
    turns.say(role, content);
    return;
  }
  for (const block of asArray(content)) {
    if (!isRecord(block)) continue;
    if (block.type === "text") turns.say(role, asString(block.text));
    else if (block.type === "tool_use") turns.call(block.id, block.name, block.input);
    else if (block.type === "tool_result")
      turns.result(block.tool_use_id, undefined, blockText(block.content), block.is_error === true);
    // thinking, redacted_thinking, image, and blocks to come: not part of the saved context.
  }
}

/**
 * Claude Code 2.1.328 (~/.claude/projects/<cwd, dashed>/<session>.jsonl): one record per line;
 * `user` and `assistant` records carry `message.content` (an assistant message is split over
 * several records, one block each). Records marked `isMeta` (command caveats) and side chains
 * are not the conversation; `system` records are hook summaries and the `compact_boundary`
 * after which only the summary (`isCompactSummary`) and what followed count. Attachments (hook
 * output, environment, skill lists), api-request records and the rest are skipped.
 */
function claudeTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    if (record.isSidechain === true) continue;
    if (record.type === "system" && record.subtype === "compact_boundary") turns.reset();
    if ((record.type !== "user" && record.type !== "assistant") || record.isMeta === true) continue;
    const message = record.message;
    if (!isRecord(message)) continue;
    contentBlocks(turns, record.type, message.content);
  }
  return turns.list;
}

/**
 * Factory Droid 0.225.2 (~/.factory/sessions/<cwd, dashed>/<session>.jsonl): `message` records
 * holding Anthropic-style `message.content` blocks; the hook records it keeps in the same
 * stream are `visibility: "user_only"` with empty content.
 */
function droidTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    const message = record.message;
    if (record.type !== "message" || !isRecord(message) || message.visibility === "user_only") continue;
    if (message.role === "user" || message.role === "assistant") contentBlocks(turns, message.role, message.content);
  }
  return turns.list;
}

// ---- Codex and CodeBuddy: Responses-API items -----------------------------------------------------

/**
 * responseItem(turns, item): a Responses-API item as Codex's rollout and CodeBuddy's session file
 * hold them. Messages of role user or assistant; developer and system messages are the host's
 * instructions; reasoning is dropped.
 */
function responseItem(turns: Turns, item: Json): void {
  switch (item.type) {
    case "message":
      if (item.role === "user" || item.role === "assistant") turns.say(item.role, blockText(item.content));
      return;
    case "function_call":
      turns.call(item.call_id ?? item.callId, item.name, item.arguments);
      return;
    case "custom_tool_call":
      turns.call(item.call_id ?? item.callId, item.name, item.input);
      return;
    case "local_shell_call":
      turns.call(item.call_id, "shell", isRecord(item.action) ? item.action : undefined);
      return;
    case "function_call_output":
    case "custom_tool_call_output":
    case "function_call_result":
      turns.result(item.call_id ?? item.callId, item.name, outputText(item.output));
      return;
  }
}

/** outputText(output) → a tool output as text: a string, {content}/{text}, or content blocks. */
function outputText(output: unknown): string | undefined {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return blockText(output);
  if (isRecord(output)) return asString(output.text) ?? blockText(output.content);
  return undefined;
}

/**
 * Codex 0.169.0 rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl):
 * `{type, payload}` records. `response_item` payloads are what the model saw; `event_msg` repeats
 * them for the UI and is skipped, as are session_meta, turn_context, world_state and token
 * records. A `compacted` record replaces the history: its `replacement_history` (the kept user
 * messages and the summary) becomes the conversation, or its `message` alone when there is none.
 */
function codexTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    const payload = record.payload;
    if (!isRecord(payload)) continue;
    if (record.type === "response_item") responseItem(turns, payload);
    else if (record.type === "compacted") {
      turns.reset();
      const history = asArray(payload.replacement_history).filter(isRecord);
      if (history.length > 0) for (const item of history) responseItem(turns, item);
      else turns.say("user", asString(payload.message));
    }
  }
  return turns.list;
}

/**
 * CodeBuddy Code 2.117.0 (~/.codebuddy/projects/<cwd, dashed>/<session>.jsonl): Responses-API
 * items one per line (message, function_call, function_call_result, reasoning); a user message
 * a hook added (our Stop reason, "Stop hook: …") is marked `providerData.isMeta`.
 */
function codebuddyTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    if (isRecord(record.providerData) && record.providerData.isMeta === true) continue;
    responseItem(turns, record);
  }
  return turns.list;
}

// ---- Gemini CLI and Qwen Code: Gemini parts ---------------------------------------------------------

/** geminiParts(turns, role, parts): text → a turn (thought parts dropped), functionCall → a call, functionResponse → a result. */
function geminiParts(turns: Turns, role: "user" | "assistant", parts: unknown, results: boolean): void {
  if (typeof parts === "string") {
    turns.say(role, parts);
    return;
  }
  const texts: string[] = [];
  for (const part of asArray(parts)) {
    if (!isRecord(part)) continue;
    if (typeof part.text === "string" && part.thought !== true) texts.push(part.text);
    else if (isRecord(part.functionCall)) {
      if (texts.length > 0) turns.say(role, texts.splice(0).join("\n"));
      turns.call(part.functionCall.id, part.functionCall.name, part.functionCall.args);
    } else if (results && isRecord(part.functionResponse)) {
      const response = part.functionResponse;
      turns.result(response.id, response.name, functionResponseText(response.response));
    }
  }
  if (texts.length > 0) turns.say(role, texts.join("\n"));
}

/** functionResponseText({output: "…"}) → "…"; an error field, or the whole response as JSON, otherwise. */
function functionResponseText(response: unknown): string | undefined {
  if (!isRecord(response)) return typeof response === "string" ? response : undefined;
  return asString(response.output) ?? asString(response.error) ?? JSON.stringify(response);
}

/**
 * Gemini CLI 0.61.0 (~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl): a log of updates
 * to a list of messages, replayed as the CLI replays it (its loadConversationRecord): a record
 * with an `id` adds that message or replaces the one with the same id in place, `$rewindTo`
 * drops that message and every later one, `$set.messages` replaces the whole list. Messages are
 * `user` (text parts; the tool answers it sends back are also in the `gemini` message's
 * toolCalls, read from there) or `gemini` (content, `thoughts` dropped, `toolCalls` with their
 * `result`); info and error messages are skipped.
 */
function geminiTurns(records: Json[]): TranscriptTurn[] {
  const messages = new Map<string, Json>();
  const setAll = (list: unknown): void => {
    messages.clear();
    for (const message of asArray(list))
      if (isRecord(message) && typeof message.id === "string") messages.set(message.id, message);
  };
  for (const record of records) {
    if (typeof record.$rewindTo === "string") {
      const ids = [...messages.keys()];
      const at = ids.indexOf(record.$rewindTo);
      if (at < 0) messages.clear();
      else for (const id of ids.slice(at)) messages.delete(id);
    } else if (typeof record.id === "string") messages.set(record.id, record);
    else if (isRecord(record.$set) && Array.isArray(record.$set.messages)) setAll(record.$set.messages);
    else if (typeof record.sessionId === "string" && Array.isArray(record.messages)) setAll(record.messages);
  }
  const turns = new Turns();
  for (const message of messages.values()) {
    if (message.type === "user") geminiParts(turns, "user", message.content, false);
    else if (message.type === "gemini") {
      geminiParts(turns, "assistant", message.content, false);
      for (const call of asArray(message.toolCalls)) {
        if (!isRecord(call)) continue;
        turns.call(call.id, call.name, call.args);
        const response = asArray(call.result).find((r) => isRecord(r) && isRecord(r.functionResponse));
        const output =
          isRecord(response) && isRecord(response.functionResponse) ? response.functionResponse.response : undefined;
        turns.result(
          call.id,
          call.name,
          functionResponseText(output) ?? asString(call.resultDisplay),
          call.status === "error",
        );
      }
    }
  }
  return turns.list;
}

/**
 * Qwen Code 0.24.4 (~/.qwen/projects/<cwd, dashed>/chats/<session>.jsonl): `user`, `assistant`
 * and `tool_result` records holding Gemini-style `message.parts` (thought parts dropped);
 * `system` records are telemetry and snapshots. Our Stop reason is not recorded at all.
 */
function qwenTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    const message = record.message;
    if (!isRecord(message)) continue;
    if (record.type === "user") geminiParts(turns, "user", message.parts, false);
    else if (record.type === "assistant") geminiParts(turns, "assistant", message.parts, false);
    else if (record.type === "tool_result") geminiParts(turns, "user", message.parts, true);
  }
  return turns.list;
}

// ---- Copilot CLI: session events --------------------------------------------------------------------

/**
 * Copilot CLI 1.0.102 (~/.copilot/session-state/<session>/events.jsonl): `{type, data}` events.
 * `user.message` (its `content`, not the `transformedContent` with the date prepended),
 * `assistant.message` (`content`, its `toolRequests` as calls; `reasoningText` dropped) and
 * `tool.execution_complete` (`result.content`); `system.message` is the host's prompt; hook,
 * usage and turn events are skipped.
 */
function copilotTurns(records: Json[]): TranscriptTurn[] {
  const turns = new Turns();
  for (const record of records) {
    const data = record.data;
    if (!isRecord(data)) continue;
    if (record.type === "user.message") turns.say("user", asString(data.content));
    else if (record.type === "assistant.message") {
      turns.say("assistant", asString(data.content));
      for (const request of asArray(data.toolRequests))
        if (isRecord(request)) turns.call(request.toolCallId, request.name, request.arguments);
    } else if (record.type === "tool.execution_complete") {
      const result = isRecord(data.result) ? data.result : {};
      const error = isRecord(data.error) ? asString(data.error.message) : undefined;
      turns.result(data.toolCallId, undefined, asString(result.content) ?? error, data.success === false);
    }
  }
  return turns.list;
}

// ---- A transcript that lags ---------------------------------------------------------------------------

/**
 * withLastAssistantMessage(turns, payload.last_assistant_message) → turns, with that message
 * appended unless the transcript already ends with it. Measured: at Claude Code 2.1.328's Stop
 * after a continuation, and at the Stop of a resumed session, the file did not yet hold the
 * answer the payload's `last_assistant_message` carried (fixtures/transcripts/claude/stop.jsonl,
 * after-compact.jsonl).
 */
export function withLastAssistantMessage(
  turns: readonly TranscriptTurn[],
  lastAssistantMessage: unknown,
): TranscriptTurn[] {
  const message = typeof lastAssistantMessage === "string" ? lastAssistantMessage.trim() : "";
  const last = turns.at(-1);
  if (message === "" || (last?.role === "assistant" && last.content === message)) return [...turns];
  return [...turns, { role: "assistant", content: message }];
}

// ---- The compile_transcript input ------------------------------------------------------------------

const utf8 = new TextEncoder();
const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * cutUtf8(text, maxBytes) → text when it fits in maxBytes of UTF-8, else its start cut at a
 * character boundary followed by a marker naming how much was cut, the whole at most maxBytes
 * (empty when not even the marker fits).
 */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = utf8Bytes(text);
  if (bytes <= maxBytes) return text;
  const encoded = utf8.encode(text);
  let keep = Math.max(0, maxBytes - utf8Bytes(cutMarker(bytes)));
  for (;;) {
    while (keep > 0 && (encoded[keep]! & 0xc0) === 0x80) keep--; // not inside a character
    const cut = `${Buffer.from(encoded.subarray(0, keep)).toString("utf8")}${cutMarker(bytes - keep)}`;
    if (utf8Bytes(cut) <= maxBytes) return cut;
    if (keep === 0) return "";
    keep--;
  }
}

const cutMarker = (dropped: number): string => ` […${dropped} bytes cut]`;

/**
 * turnLine(turn, maxBytes) → the turn's JSONL line, its content cut (cutUtf8) until the line fits,
 * or undefined when not even a cut one does. JSON escapes make the line longer than the content
 * (a control character takes six bytes), so the longest cut that fits is searched for.
 */
function turnLine(turn: TranscriptTurn, maxBytes: number): string | undefined {
  const lineOf = (content: string): string => JSON.stringify({ role: turn.role, content });
  const whole = lineOf(turn.content);
  if (utf8Bytes(whole) <= maxBytes) return whole;
  let best: string | undefined;
  let low = 1;
  let high = Math.min(utf8Bytes(turn.content), maxBytes);
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    const content = cutUtf8(turn.content, middle);
    const line = lineOf(content);
    if (content !== "" && utf8Bytes(line) <= maxBytes) {
      best = line;
      low = middle + 1;
    } else high = middle - 1;
  }
  return best;
}

/**
 * compileTranscriptInput(turns, maxBytes) → compile_transcript's `transcript`: one
 * `{"role","content"}` line per turn, the newest turns that fit in maxBytes of UTF-8 (newline
 * separators counted), oldest first, whole turns only. A turn's line longer than MAX_TURN_BYTES
 * (or than maxBytes) is cut at a character boundary with a marker; at most MAX_TRANSCRIPT_TURNS
 * turns. Turns with empty content are left out. "" when nothing fits: the server refuses an
 * empty transcript, so the caller then skips the call.
 */
export function compileTranscriptInput(turns: readonly TranscriptTurn[], maxBytes: number): string {
  const budget = Number.isFinite(maxBytes) && maxBytes > 0 ? Math.floor(maxBytes) : 0;
  const lineCap = Math.min(MAX_TURN_BYTES, budget);
  const lines: string[] = [];
  let used = 0;
  for (let i = turns.length - 1; i >= 0 && lines.length < MAX_TRANSCRIPT_TURNS; i--) {
    const turn = turns[i];
    if (!turn || typeof turn.role !== "string" || typeof turn.content !== "string" || turn.content === "") continue;
    const line = turnLine(turn, lineCap);
    if (line === undefined) break;
    const cost = utf8Bytes(line) + (lines.length > 0 ? 1 : 0);
    if (used + cost > budget) break;
    lines.push(line);
    used += cost;
  }
  return lines.reverse().join("\n");
}

// ---- Reading the file ----------------------------------------------------------------------------------

export type TranscriptTail =
  | {
      readonly ok: true;
      /** Whole lines from the end of the file, at most maxBytes. */
      readonly text: string;
      /** The file held more before this text (its start was dropped). */
      readonly truncated: boolean;
    }
  | { readonly ok: false; readonly code: string | undefined; readonly problem: string };

const currentUid = (): number => (typeof process.getuid === "function" ? process.getuid() : -1);

/**
 * readTranscriptTail(path, maxBytes) → the last maxBytes (at most) of the transcript, starting at
 * a line boundary, or why not ("is a symlink", "is not a regular file", "is owned by another
 * user", "cannot be read (ENOENT)"). The path comes from the payload, so it is opened
 * O_NOFOLLOW|O_NONBLOCK (a link is refused, never followed; a FIFO does not block), checked on
 * the opened descriptor (a regular file of this user), and read from where the end was when we
 * looked: its size is only a starting point, never a length to allocate (a sparse file fakes any
 * size; a host may be appending as we read). Never throws.
 */
export function readTranscriptTail(filePath: string, maxBytes: number): TranscriptTail {
  const budget = Number.isFinite(maxBytes) && maxBytes > 0 ? Math.floor(maxBytes) : 0;
  if (typeof filePath !== "string" || filePath === "" || filePath.includes("\0"))
    return { ok: false, code: undefined, problem: "is not a usable path" };
  let fd: number | undefined;
  try {
    fd = fs.openSync(filePath, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { ok: false, code: undefined, problem: "is not a regular file" };
    if (process.platform !== "win32" && stat.uid !== currentUid())
      return { ok: false, code: undefined, problem: "is owned by another user" };
    const truncated = stat.size > budget;
    // One byte more than the bound when the start is cut: if it is a newline, the first line is whole.
    const start = truncated ? stat.size - budget - 1 : 0;
    const buffer = Buffer.allocUnsafe(stat.size - start);
    let filled = 0;
    while (filled < buffer.length) {
      const count = fs.readSync(fd, buffer, filled, buffer.length - filled, start + filled);
      if (count === 0) break; // shrunk since fstat
      filled += count;
    }
    let bytes = buffer.subarray(0, filled);
    if (truncated) {
      // Whatever precedes the first newline is the end of a line we did not read.
      const newline = bytes.indexOf(0x0a);
      bytes = newline < 0 ? bytes.subarray(0, 0) : bytes.subarray(newline + 1);
    }
    return { ok: true, text: bytes.toString("utf8"), truncated };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === "ELOOP" || code === "EMLINK") return { ok: false, code, problem: "is a symlink" };
    return { ok: false, code, problem: `cannot be read (${code ?? "error"})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
