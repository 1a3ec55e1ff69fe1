// A scripted model that does only what our hook texts tell it, for the memory proofs
// (memory-handoff.e2e.test.ts, shared-memory.e2e.test.ts): it reads each request the host sends
// and answers the way a model following the hooks would, with nothing of its own.
// - A SessionStart context naming `load_working_context(project=…, session=…)` (src/core/texts.ts
//   loadGuidance): it calls that tool once, with exactly those arguments, under the name the
//   host exposes it by.
// - A Stop continuation naming `save_working_context(project=…, session=…)` (saveGuidance): when
//   the session did work (`work` is given), it saves that working state under exactly those
//   arguments; otherwise it stops, as the text allows ("when nothing changed, stopping is fine").
// - Anything else: a plain answer. Without our hooks no text names either call, so it never
//   touches the memory: that is what the negative controls rely on.
// The call is read from the text, never from the test: a text that stops naming the slot, or
// names another one, changes what the model does. `mcp__velesdb-memory__load_working_context(…)`
// (a host-qualified name, issue 34 §4) is read the same way.
import type { ClaudeReply, CodexReply, LoggedRequest } from "./mock-llm.ts";
import { codexText, text } from "./mock-llm.ts";
import type { GeminiReply, GeminiRequest } from "./mock-gemini.ts";
import { geminiCall, geminiText } from "./mock-gemini.ts";

export interface Slot {
  readonly project: string;
  readonly session: string;
}

/** What the session worked out, saved when the Stop text asks for a save. */
export interface Work {
  readonly goal: string;
  readonly verifiedFacts: readonly string[];
  readonly pendingActions: readonly string[];
}

const QUOTED = String.raw`"(?:[^"\\]|\\.)*"`;
/** callIn(text, "load_working_context") → the slot the text names for that call, or undefined. */
export function callIn(text: string, tool: "load_working_context" | "save_working_context"): Slot | undefined {
  const m = new RegExp(String.raw`(?:[\w-]+__)?${tool}\(project=(${QUOTED}), session=(${QUOTED})\)`).exec(text);
  if (!m) return undefined;
  try {
    return { project: JSON.parse(m[1]!) as string, session: JSON.parse(m[2]!) as string };
  } catch {
    return undefined;
  }
}

/** The working_context object velesdb-memory 0.17.0 takes (src/context/model.rs WorkingContext). */
export const workingState = (work: Work) => ({
  goal: work.goal,
  verified_facts: work.verifiedFacts.map((fact) => ({ text: fact })),
  pending_actions: [...work.pendingActions],
});

/** What the model does next, host-neutral. */
type Step = { kind: "call"; tool: "load_working_context" | "save_working_context"; args: Record<string, unknown> } | { kind: "say"; text: string };

/**
 * nextStep(view, work) → the obedient step. `view` says what the request shows: the hook contexts
 * (SessionStart's, and the latest Stop continuation's), which tools the model already called,
 * and whether the last message is a tool's answer.
 */
function nextStep(view: { sessionStart: string; stopText: string | undefined; called: readonly string[]; answered: string | undefined }, work: Work | undefined): Step {
  const load = callIn(view.sessionStart, "load_working_context");
  if (view.answered === "save_working_context") return { kind: "say", text: "SAVED the working state" };
  if (view.stopText !== undefined) {
    const save = callIn(view.stopText, "save_working_context");
    if (save && work && !view.called.includes("save_working_context")) return { kind: "call", tool: "save_working_context", args: { ...save, working: workingState(work) } };
    return { kind: "say", text: "NOTHING CHANGED since the load; stopping" };
  }
  if (load && !view.called.includes("load_working_context")) return { kind: "call", tool: "load_working_context", args: { ...load } };
  return { kind: "say", text: work ? "WORK DONE" : "READ the working context" };
}

// ---- Claude Code (Anthropic messages) -------------------------------------------------------

const claudeText = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((b: any) => (typeof b?.text === "string" ? b.text : typeof b?.content === "string" ? b.content : Array.isArray(b?.content) ? claudeText(b.content) : "")).join("\n") : "";

/** claudeModel(work) → a reply function for mock-llm's Claude turns. */
export function claudeModel(work?: Work): (req: LoggedRequest) => ClaudeReply {
  return (req) => {
    const messages: any[] = Array.isArray(req.body?.messages) ? req.body.messages : [];
    const uses = messages.filter((m) => m?.role === "assistant").flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === "tool_use") : []));
    const toolName = (name: string) => name.replace(/^mcp__velesdb[-_]memory__/, "");
    const last = messages.at(-1);
    const lastResult = Array.isArray(last?.content) ? last.content.find((b: any) => b?.type === "tool_result") : undefined;
    const answered = lastResult ? toolName(uses.find((u: any) => u.id === lastResult.tool_use_id)?.name ?? "") : undefined;
    const systemTexts = messages.filter((m) => m?.role === "system").map((m) => claudeText(m.content));
    const sessionStart = systemTexts.filter((t) => t.includes("SessionStart hook additional context:")).join("\n");
    const stop = messages.filter((m) => m?.role === "user").map((m) => claudeText(m.content)).filter((t) => t.includes("Stop hook additional context:")).at(-1);
    const step = nextStep({ sessionStart, stopText: stop, called: uses.map((u: any) => toolName(u.name)), answered }, work);
    return step.kind === "say" ? text(step.text) : { blocks: [{ type: "tool_use", name: `mcp__velesdb-memory__${step.tool}`, input: step.args }] };
  };
}

// ---- Codex CLI (Responses API) ---------------------------------------------------------------

/** codexModel(work) → a reply function for mock-llm's Codex turns. MCP tools sit behind tool search. */
export function codexModel(work?: Work): (req: LoggedRequest) => CodexReply {
  return (req) => {
    const input: any[] = Array.isArray(req.body?.input) ? req.body.input : [];
    const itemText = (i: any) => (Array.isArray(i?.content) ? i.content.map((b: any) => (typeof b?.text === "string" ? b.text : "")).join("\n") : String(i?.content ?? ""));
    const calls = input.filter((i) => i?.type === "function_call");
    const last = input.at(-1);
    const answered = last?.type === "function_call_output" ? calls.find((c) => c.call_id === last.call_id)?.name : undefined;
    const sessionStart = input.filter((i) => i?.type === "message" && i?.role === "developer").map(itemText).join("\n");
    const stop = input.filter((i) => i?.type === "message" && i?.role === "user").map(itemText).filter((t) => t.includes("<hook_prompt")).at(-1);
    const step = nextStep({ sessionStart, stopText: stop, called: calls.map((c) => c.name), answered }, work);
    if (step.kind === "say") return codexText(step.text);
    // Measured on codex-cli 0.169.0 (README "Findings"): the namespaced call works once a tool search ran.
    const searched = input.some((i) => i?.type === "tool_search_call" && JSON.stringify(i.arguments ?? {}).includes(step.tool));
    if (!searched) return { items: [{ type: "tool_search_call", call_id: `search-${step.tool}`, execution: "client", arguments: { query: step.tool } }] };
    return { items: [{ type: "function_call", namespace: "mcp__velesdb_memory", name: step.tool, arguments: JSON.stringify(step.args), call_id: `call-${step.tool}` }] };
  };
}

// ---- Gemini CLI (generateContent) --------------------------------------------------------------

/** geminiModel(work) → a reply function for mock-gemini's turns. */
export function geminiModel(work?: Work): (req: GeminiRequest) => GeminiReply {
  return (req) => {
    const contents: any[] = Array.isArray(req.body?.contents) ? req.body.contents : [];
    const parts = (c: any): any[] => (Array.isArray(c?.parts) ? c.parts : []);
    const toolName = (name: string) => name.replace(/^mcp_velesdb-memory_/, "");
    const calls = contents.filter((c) => c?.role === "model").flatMap(parts).filter((p) => p?.functionCall).map((p) => toolName(p.functionCall.name));
    const lastResponse = parts(contents.at(-1)).find((p) => p?.functionResponse);
    const answered = lastResponse ? toolName(lastResponse.functionResponse.name) : undefined;
    const userTexts = contents.filter((c) => c?.role === "user").map((c) => parts(c).map((p) => (typeof p?.text === "string" ? p.text : "")).join("\n"));
    // SessionStart: the first user entry's <hook_context>; AfterAgent's reason: a later user entry, verbatim.
    const sessionStart = userTexts[0] ?? "";
    const stop = userTexts.slice(1).filter((t) => callIn(t, "save_working_context") !== undefined).at(-1);
    const step = nextStep({ sessionStart, stopText: stop, called: calls, answered }, work);
    return step.kind === "say" ? geminiText(step.text) : geminiCall(`mcp_velesdb-memory_${step.tool}`, step.args);
  };
}
