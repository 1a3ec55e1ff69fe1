// A scripted model that does only what our hook texts tell it, for the memory proofs
// (memory-handoff.e2e.test.ts, shared-memory.e2e.test.ts): it reads each request the host sends
// and answers the way a model following the hooks would, with nothing of its own.
// - A SessionStart context naming `load_working_context(project=…, session=…)` (src/core/texts.ts
//   loadGuidance): it calls that tool once, with exactly those arguments, under the name the
//   host exposes it by; when the answer is found: false and the text says the same call on the
//   first one or two of other_sessions returns where the latest sessions left off, it makes
//   those calls.
// - A SessionStart context in which the hook loaded the state itself ("velesdb-hooks loaded …",
//   loadedContextGuidance, docs/working-context.md#loaded-by-the-hook): the state is already in
//   front of it, so it calls nothing, unless the text says items were left out to fit the
//   budget; then the call the text names for the whole state, once. ("velesdb-hooks asked velesdb-memory …: nothing to resume",
//   nothingSavedGuidance, names no load: it loads nothing.)
// - A Stop continuation naming `save_working_context(project=…, session=…)` (saveGuidance): when
//   the session did work (`work` is given), it saves that working state under exactly those
//   arguments; otherwise it stops, as the text allows ("when nothing changed, stopping is fine").
// - A task's edit (the prompt's work, `Task.edit`): it makes it; when our guard refuses it with
//   the recall that unlocks (src/core/texts.ts guardRefusal: recall_fused … with filter {…}), it
//   makes that recall, with that filter, then the same edit once more.
// - Anything else: a plain answer. Without our hooks no text names a memory call, so it never
//   touches the memory: that is what the negative controls rely on.
// The call is read from the text, never from the test: a text that stops naming the slot, or
// names another one, changes what the model does. `mcp__velesdb-memory__load_working_context(…)`
// (a host-qualified name, docs/working-context.md#tool-names-the-hosts-tool-search-finds) is read the same way.
import type { ClaudeReply, CodexReply, LoggedRequest } from "./mock-llm.ts";
import { codexText, text } from "./mock-llm.ts";
import type { GeminiReply, GeminiRequest } from "../hosts/gemini/mock-gemini.ts";
import { geminiCall, geminiText } from "../hosts/gemini/mock-gemini.ts";

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

/**
 * grammarWork(finding) → the memory proofs' first session's work (memory-handoff and
 * memory-without-model): moving the grammar rules out of the generated guarded.txt, with
 * `finding` (which carries the marker that must come back) as its one verified fact.
 */
export const grammarWork = (finding: string): Work => ({
  goal: "move the grammar rules out of the generated guarded.txt",
  verifiedFacts: [finding],
  pendingActions: ["edit parser.txt, then regenerate guarded.txt"],
});

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

/** An edit the session's task asks for (the prompt's work, not a hook's). */
export interface Edit {
  /** The file, relative to the workspace. */
  readonly file: string;
  readonly content: string;
}

/** What the session is asked to do besides following the hooks: an edit, and what it then knows. */
export interface Task {
  readonly edit?: Edit;
  /** Saved when a Stop text asks for a save; without it the session stops ("nothing changed"). */
  readonly work?: Work;
}

/** One tool call of the session so far and the text of its answer (undefined while unanswered). */
export interface Called {
  readonly tool: string;
  readonly answer: string | undefined;
}

type Step =
  | {
      kind: "call";
      tool: "load_working_context" | "save_working_context" | "recall_fused";
      args: Record<string, unknown>;
    }
  | { kind: "edit"; edit: Edit }
  | { kind: "say"; text: string };

/**
 * otherSessions(answer) → other_sessions of a load answer with found: false, as each host hands
 * it over (the JSON text nested in the host's own JSON: backslashes dropped); [] on a hit.
 */
function otherSessions(answer: string | undefined): string[] {
  const plain = (answer ?? "").replace(/\\/g, "");
  if (!plain.includes('"found":false')) return [];
  const list = /"other_sessions":\[([^\]]*)\]/.exec(plain)?.[1] ?? "";
  return [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
}

/** The opening of the SessionStart text when the hook loaded the state itself (src/core/texts.ts loadedContextGuidance). */
const LOADED_BY_HOOK =
  /velesdb-hooks loaded (?:this session's velesdb-memory working context|the velesdb-memory working context that)/;
/** …and its line when items did not fit the budget. */
const LEFT_OUT = /Left out to stay within \d+ characters: /;

/** The guard's refusal (src/core/texts.ts guardRefusal) names the recall that unlocks, with its filter. */
const RECALL_ASKED = /recall_fused about this code area with filter (\{"project": "(?:[^"\\]|\\.)*"\})/;

/** What a model reads in one request: the hook contexts (SessionStart's, the latest Stop continuation's) and the session's tool calls with their answers, in order. */
export interface SessionView {
  readonly sessionStart: string;
  readonly stopText: string | undefined;
  readonly history: readonly Called[];
}

/** nextStep(view, task) → the obedient step. */
function nextStep(view: SessionView, task: Task): Step {
  const last = view.history.at(-1);
  const called = (tool: string) => view.history.some((c) => c.tool === tool);
  if (last?.tool === "save_working_context") return { kind: "say", text: "SAVED the working state" };
  if (view.stopText !== undefined) {
    const save = callIn(view.stopText, "save_working_context");
    if (save && task.work && !called("save_working_context"))
      return { kind: "call", tool: "save_working_context", args: { ...save, working: workingState(task.work) } };
    return { kind: "say", text: "NOTHING CHANGED since the load; stopping" };
  }
  const load = callIn(view.sessionStart, "load_working_context");
  // The hook loaded the state itself: read from the context, loaded again only when the text says
  // part of it was left out ("Left out to stay within N characters: …; <call> returns the whole state").
  const loadedByHook = LOADED_BY_HOOK.test(view.sessionStart);
  const wanted = load !== undefined && (!loadedByHook || LEFT_OUT.test(view.sessionStart));
  if (load && wanted && !called("load_working_context"))
    return { kind: "call", tool: "load_working_context", args: { ...load } };

  // The text's next step on a miss: "with found: false the same call on the first one or two of
  // [other_sessions] returns where the latest sessions left off" (loadGuidance): those two, in order.
  const loads = view.history.filter((c) => c.tool === "load_working_context");
  const others = /with found: false the same call on the first one or two/.test(view.sessionStart)
    ? otherSessions(loads[0]?.answer).slice(0, 2)
    : [];
  const next = others[loads.length - 1];
  if (load && !loadedByHook && last?.tool === "load_working_context" && next !== undefined)
    return { kind: "call", tool: "load_working_context", args: { project: load.project, session: next } };
  if (task.edit) {
    const edits = view.history.filter((c) => c.tool === "edit");
    const refused = edits.at(-1)?.answer?.match(RECALL_ASKED);
    // Refused with the recall that unlocks named: that recall, then the same edit once more.
    if (last?.tool === "edit" && refused)
      return { kind: "call", tool: "recall_fused", args: { query: task.edit.file, filter: JSON.parse(refused[1]!) } };
    if (edits.length === 0 || (last?.tool === "recall_fused" && edits.length < 2))
      return { kind: "edit", edit: task.edit };
  }
  return { kind: "say", text: task.work ? "WORK DONE" : "READ the working context" };
}

// ---- Claude Code (Anthropic messages) -------------------------------------------------------

const claudeText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((b: any) =>
            typeof b?.text === "string"
              ? b.text
              : typeof b?.content === "string"
                ? b.content
                : Array.isArray(b?.content)
                  ? claudeText(b.content)
                  : "",
          )
          .join("\n")
      : "";

/** Our name for a host's tool: the velesdb-memory tool's own name, "edit" for the host's file tools. */
export const ourName = (name: string): string =>
  /^(Write|Edit|apply_patch|write_file|replace)$/.test(name)
    ? "edit"
    : name.replace(/^mcp__velesdb[-_]memory__|^mcp_velesdb-memory_/, "");

/** claudeView(req) → what the model reads in a Claude Code request (Anthropic messages). */
export function claudeView(req: LoggedRequest): SessionView {
  const messages: any[] = Array.isArray(req.body?.messages) ? req.body.messages : [];
  const blocks = (role: string, type: string) =>
    messages
      .filter((m) => m?.role === role)
      .flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === type) : []));
  const results = blocks("user", "tool_result");
  const history = blocks("assistant", "tool_use").map((u: any) => ({
    tool: ourName(u.name),
    answer: ((r) => (r ? claudeText(r.content) : undefined))(results.find((r: any) => r.tool_use_id === u.id)),
  }));
  const systemTexts = messages.filter((m) => m?.role === "system").map((m) => claudeText(m.content));
  const sessionStart = systemTexts.filter((t) => t.includes("SessionStart hook additional context:")).join("\n");
  const stopText = messages
    .filter((m) => m?.role === "user")
    .map((m) => claudeText(m.content))
    .filter((t) => t.includes("Stop hook additional context:"))
    .at(-1);
  return { sessionStart, stopText, history };
}

/** claudeModel(task) → a reply function for mock-llm's Claude turns (cwd: the workspace, for Write's absolute path). */
export function claudeModel(task: Task = {}, cwd = ""): (req: LoggedRequest) => ClaudeReply {
  return (req) => {
    const step = nextStep(claudeView(req), task);
    if (step.kind === "say") return text(step.text);
    if (step.kind === "edit")
      return {
        blocks: [
          {
            type: "tool_use",
            name: "Write",
            input: { file_path: `${cwd}/${step.edit.file}`, content: step.edit.content },
          },
        ],
      };
    return { blocks: [{ type: "tool_use", name: `mcp__velesdb-memory__${step.tool}`, input: step.args }] };
  };
}

// ---- Codex CLI (Responses API) ---------------------------------------------------------------

/** codexView(req) → what the model reads in a Codex request (Responses API `input[]`). */
export function codexView(req: LoggedRequest): SessionView {
  const input: any[] = Array.isArray(req.body?.input) ? req.body.input : [];
  const itemText = (i: any) =>
    Array.isArray(i?.content)
      ? i.content.map((b: any) => (typeof b?.text === "string" ? b.text : "")).join("\n")
      : String(i?.content ?? "");
  const outputOf = (callId: string) =>
    input.find(
      (i) => (i?.type === "function_call_output" || i?.type === "custom_tool_call_output") && i.call_id === callId,
    );
  const history = input
    .filter((i) => i?.type === "function_call" || i?.type === "custom_tool_call")
    .map((c) => ({
      tool: ourName(c.name),
      answer: ((o) => (o ? (typeof o.output === "string" ? o.output : JSON.stringify(o.output)) : undefined))(
        outputOf(c.call_id),
      ),
    }));
  const sessionStart = input
    .filter((i) => i?.type === "message" && i?.role === "developer")
    .map(itemText)
    .join("\n");
  const stopText = input
    .filter((i) => i?.type === "message" && i?.role === "user")
    .map(itemText)
    .filter((t) => t.includes("<hook_prompt"))
    .at(-1);
  return { sessionStart, stopText, history };
}

/** codexModel(task) → a reply function for mock-llm's Codex turns. MCP tools sit behind tool search. */
export function codexModel(task: Task = {}): (req: LoggedRequest) => CodexReply {
  return (req) => {
    const input: any[] = Array.isArray(req.body?.input) ? req.body.input : [];
    const view = codexView(req);
    const step = nextStep(view, task);
    const n = view.history.length;
    if (step.kind === "say") return codexText(step.text);
    if (step.kind === "edit")
      return {
        items: [
          {
            type: "custom_tool_call",
            name: "apply_patch",
            call_id: `edit-${n}`,
            input: `*** Begin Patch\n*** Add File: ${step.edit.file}\n+${step.edit.content.trimEnd()}\n*** End Patch\n`,
          },
        ],
      };
    // Measured on codex-cli 0.169.0 (README "Findings"): the namespaced call works once a tool search ran.
    const searched = input.some(
      (i) => i?.type === "tool_search_call" && JSON.stringify(i.arguments ?? {}).includes(step.tool),
    );
    if (!searched)
      return {
        items: [
          {
            type: "tool_search_call",
            call_id: `search-${step.tool}`,
            execution: "client",
            arguments: { query: step.tool },
          },
        ],
      };
    return {
      items: [
        {
          type: "function_call",
          namespace: "mcp__velesdb_memory",
          name: step.tool,
          arguments: JSON.stringify(step.args),
          call_id: `call-${n}`,
        },
      ],
    };
  };
}

// ---- Gemini CLI (generateContent) --------------------------------------------------------------

/** geminiModel(task) → a reply function for mock-gemini's turns. */
export function geminiModel(task: Task = {}): (req: GeminiRequest) => GeminiReply {
  return (req) => {
    const contents: any[] = Array.isArray(req.body?.contents) ? req.body.contents : [];
    const parts = (c: any): any[] => (Array.isArray(c?.parts) ? c.parts : []);
    const calls = contents
      .filter((c) => c?.role === "model")
      .flatMap(parts)
      .filter((p) => p?.functionCall);
    const responses = contents
      .filter((c) => c?.role === "user")
      .flatMap(parts)
      .filter((p) => p?.functionResponse);
    // Calls and answers pair up in order (one call per model turn here).
    const history = calls.map((p, i) => ({
      tool: ourName(p.functionCall.name),
      answer: responses[i] ? JSON.stringify(responses[i].functionResponse.response) : undefined,
    }));
    const userTexts = contents
      .filter((c) => c?.role === "user")
      .map((c) =>
        parts(c)
          .map((p) => (typeof p?.text === "string" ? p.text : ""))
          .join("\n"),
      );
    // SessionStart: the first user entry's <hook_context>; AfterAgent's reason: a later user entry, verbatim.
    const sessionStart = userTexts[0] ?? "";
    const stop = userTexts
      .slice(1)
      .filter((t) => callIn(t, "save_working_context") !== undefined)
      .at(-1);
    const step = nextStep({ sessionStart, stopText: stop, history }, task);
    if (step.kind === "say") return geminiText(step.text);
    if (step.kind === "edit")
      return geminiCall("write_file", { file_path: step.edit.file, content: step.edit.content });
    return geminiCall(`mcp_velesdb-memory_${step.tool}`, step.args);
  };
}
