// The hooks' own load and save of the working context (docs/working-context.md#loaded-by-the-hook
// and #saved-by-the-hook). Before, every hook only asked the model: a resumed project cost two model tool
// calls before the model knew anything, and a model that did not obey got nothing. Now
// SessionStart loads the state through the store's broker and injects a budgeted block, and
// Stop and PreCompact save a compiled one from the host's transcript. Both are bounded by a
// deadline and fail open: any cause leaves the rule answering as before, with that cause in one
// stderr line. The connection itself is the caller's (`OpenMemory`, src/mcp/memory-client.ts
// through src/hosts/host.ts), so this module holds the rules and no socket.
import * as fs from "node:fs";
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity, sessionSlot, type ProjectIdentity } from "./identity.ts";
import { UNKNOWN_SESSION } from "./payload.ts";
import { markerPath, readPrivateFile, writePrivateFile } from "./state.ts";
import { isOurContinuation, readerJson, type LoadedContext, type MemorySlot } from "./texts.ts";
import { renderWorkingState, type WorkingState } from "./working-context-block.ts";

export type MemoryAnswer =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly cause: string };

export interface MemoryConnection {
  call(tool: string, args: Record<string, unknown>): Promise<MemoryAnswer>;
  close(): void;
}

/** openMemory(env, cwd, deadline) → a connection to velesdb-memory by the deadline (a Date.now() value), or why not. */
export type OpenMemory = (
  env: NodeJS.ProcessEnv,
  cwd: string,
  deadline: number,
) => Promise<
  | { readonly ok: true; readonly memory: MemoryConnection }
  /** `unconfigured`: no shared broker was ever set up for this store (no front ran): a choice, not a fault to report. */
  | { readonly ok: false; readonly cause: string; readonly unconfigured?: boolean }
>;

/**
 * The characters of working context SessionStart injects by default. 4 000 leaves the whole
 * session-start text (about 5 000 characters with the lines around it) under half of Claude
 * Code's 10 000-character cap and Codex's 2 500-token one, and within the ~1–2 K tokens the peers
 * that were burned by size settled on (docs/working-context.md#the-budget). Hosts that send the
 * session-start text again with every model request (Copilot CLI, OpenCode, Kilo Code) pay for it
 * on each turn: 1 500 there.
 */
export const DEFAULT_CONTEXT_BUDGET = 4000;
export const RESENT_CONTEXT_BUDGET = 1500;

/**
 * How long SessionStart may spend reaching the broker and loading, in ms
 * (VELESDB_HOOKS_LOAD_MS). A warm broker answers in tens of ms; a cold start (broker and server)
 * measured ~0.6 s idle and up to ~2 s on a loaded 2-core machine (docs/working-context.md).
 * Every host here gives the hook 10 s (src/hosts/descriptors/).
 */
export const DEFAULT_LOAD_MS = 3000;
/** How long Stop and PreCompact may spend compiling and saving (VELESDB_HOOKS_SAVE_MS). */
export const DEFAULT_SAVE_MS = 5000;
/** Never more: the hosts' own hook timeout is 10 s, and the rest of the hook must still answer. */
const MAX_MEMORY_MS = 8000;

/** memoryDeadlineMs(env, name, fallback) → a whole number of ms from 0 to 8 000, else the fallback; 0 turns the step off. */
export function memoryDeadlineMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || !/^\d{1,5}$/.test(raw)) return fallback;
  return Math.min(Number(raw), MAX_MEMORY_MS);
}

export type LoadOutcome =
  | { readonly kind: "loaded"; readonly loaded: LoadedContext }
  | { readonly kind: "nothing saved" }
  /** `unconfigured`: no shared server was ever set up for the store: a choice, said nowhere. */
  | { readonly kind: "not loaded"; readonly cause: string; readonly unconfigured?: boolean };

/**
 * loadWorkingContext(open, input, slot, identity) → this session's own state, else the most
 * recently saved other session's (velesdb-memory 0.17.0 lists other_sessions most recent first,
 * src/context/memory_bridge.rs), rendered to the budget; or that nothing is saved; or why not.
 */
export async function loadWorkingContext(
  open: OpenMemory,
  input: HookInput,
  slot: MemorySlot,
  identity: ProjectIdentity,
): Promise<LoadOutcome> {
  const budget =
    identity.contextBudget ?? (input.host.contextResentEachRequest ? RESENT_CONTEXT_BUDGET : DEFAULT_CONTEXT_BUDGET);
  if (budget === 0) return { kind: "not loaded", cause: "context_budget is 0 in .velesdb-hooks.json" };
  const ms = memoryDeadlineMs(input.env, "VELESDB_HOOKS_LOAD_MS", DEFAULT_LOAD_MS);
  if (ms === 0) return { kind: "not loaded", cause: "VELESDB_HOOKS_LOAD_MS is 0" };
  const opened = await open(input.env, input.cwd, Date.now() + ms);
  if (!opened.ok) return { kind: "not loaded", cause: opened.cause, unconfigured: opened.unconfigured };
  const { memory } = opened;
  try {
    const own = await loadSlot(memory, slot.project, slot.session);
    if (!own.ok) return { kind: "not loaded", cause: own.cause };
    if (own.working) return loaded(own.working, slot.session, true, own.others, budget);
    const latest = own.others[0];
    if (latest === undefined) return { kind: "nothing saved" };
    const other = await loadSlot(memory, slot.project, latest);
    if (!other.ok) return { kind: "not loaded", cause: other.cause };
    if (!other.working) return { kind: "nothing saved" };
    rememberInherited(input, latest);
    const companion = await concurrentCompanion(memory, slot.project, own.others, Math.floor(budget * COMPANION_SHARE));
    const rest = own.others.slice(1).filter((s) => s !== companion?.session);
    return loaded(other.working, latest, false, rest, budget - (companion?.text.length ?? 0), companion);
  } finally {
    memory.close();
  }
}

/**
 * Two sessions of a repository that ran at once (two terminals, Claude Code beside Codex) each
 * saved their own slot, and a new session needs both (test/e2e/shared-memory.e2e.test.ts, proof
 * 3): a second slot saved within this window of the latest is shown too, chosen the same way
 * in at most COMPANION_SHARE of the budget. Sessions further apart follow one another,
 * and the latest carries what it was handed (saveCompiledContext, or the model's own save).
 */
const CONCURRENT_WINDOW_S = 30 * 60;
const COMPANION_SHARE = 0.3;

async function concurrentCompanion(
  memory: MemoryConnection,
  project: string,
  others: readonly string[],
  budget: number,
): Promise<LoadedContext["companion"]> {
  const [first, second] = others;
  if (first === undefined || second === undefined) return undefined;
  const listed = await memory.call("list_working_contexts", { project });
  if (!listed.ok) return undefined;
  const when = new Map<string, number>();
  for (const entry of Array.isArray(listed.value.sessions) ? listed.value.sessions : []) {
    const { session, saved_at } = (entry ?? {}) as { session?: unknown; saved_at?: unknown };
    if (typeof session === "string" && typeof saved_at === "number") when.set(session, saved_at);
  }
  const [a, b] = [when.get(first), when.get(second)];
  if (a === undefined || b === undefined || Math.abs(a - b) > CONCURRENT_WINDOW_S) return undefined;
  const state = await loadSlot(memory, project, second);
  if (!state.ok || !state.working) return undefined;
  const rendered = renderWorkingState(state.working, budget);
  return rendered.shown === 0 ? undefined : { session: second, text: rendered.text };
}

function loaded(
  working: WorkingState,
  session: string,
  own: boolean,
  otherSessions: readonly string[],
  budget: number,
  companion?: LoadedContext["companion"],
): LoadOutcome {
  const rendered = renderWorkingState(working, budget);
  return {
    kind: "loaded",
    loaded: { ...rendered, session, own, budget, otherSessions, compiled: isCompiledByHook(working), companion },
  };
}

type SlotRead =
  | { readonly ok: true; readonly working: WorkingState | undefined; readonly others: readonly string[] }
  | { readonly ok: false; readonly cause: string };

/** loadSlot(memory, project, session) → load_working_context's {found, working, other_sessions}, checked. */
async function loadSlot(memory: MemoryConnection, project: string, session: string): Promise<SlotRead> {
  const answer = await memory.call("load_working_context", { project, session });
  if (!answer.ok) return answer;
  const { found, working, other_sessions } = answer.value as {
    found?: unknown;
    working?: unknown;
    other_sessions?: unknown;
  };
  if (typeof found !== "boolean") return { ok: false, cause: "load_working_context answered without `found`" };
  const others = Array.isArray(other_sessions)
    ? other_sessions.filter((s): s is string => typeof s === "string" && s !== session)
    : [];
  const state =
    found && typeof working === "object" && working !== null && !Array.isArray(working) ? working : undefined;
  return { ok: true, working: state as WorkingState | undefined, others };
}

/** A conversation turn as compile_transcript reads it: velesdb-memory 0.17.0 src/context/segment.rs, `{role, content}` JSONL. */
export interface TranscriptTurn {
  readonly role: string;
  readonly content: string;
}

/**
 * What the hook's own save found, for the Stop rule: `modelSaved` when the model had saved this
 * session's slot itself (so the save reminder has nothing to ask), and why the hook could not
 * save, in one note. A compiled save of the hook's own does not replace the reminder: the
 * model's save is the better source (docs/working-context.md "Saved by the hook").
 */
export interface SavedByHook {
  readonly modelSaved: boolean;
  readonly note?: string;
}

export type SaveOutcome =
  | { readonly kind: "saved" }
  | { readonly kind: "kept"; readonly why: string }
  /** `quiet`: a choice (auto_save false, a deadline of 0) or the host's timing (no file yet), not a fault to report. */
  | { readonly kind: "not saved"; readonly cause: string; readonly quiet?: boolean };

/** The transcript as the hook read it: its turns, the JSONL compile_transcript gets, and what identifies this version of the file. */
export interface ReadTranscript {
  readonly turns: readonly TranscriptTurn[];
  readonly jsonl: string;
  /** Size and mtime of the file: an unchanged transcript is not compiled again. */
  readonly version: string;
}

/**
 * The compile budget, in velesdb-memory's tokens (~4 characters each): ~2 400 characters of
 * compiled conversation, which with the goal and the last step stays inside the default
 * session-start budget (DEFAULT_CONTEXT_BUDGET), so a later session sees all of it.
 */
const COMPILE_TOKEN_BUDGET = 600;
/** The goal and the last step are one line each: at most this many characters of their turn. */
const LINE_CHARS = 600;
/** A compiled paragraph becomes one verified fact of at most this many characters. */
const FACT_CHARS = 600;

/**
 * The evidence entry that marks a working context as compiled by the hook, not saved by a model
 * (velesdb-memory 0.17.0 SourceReference: a u64 fragment id and any handle string). Ownership is
 * read from the state itself: saved_at has whole seconds only (src/context/model.rs), so a model
 * that saved within a second of the hook looked like the hook's own save and was overwritten
 * (test/e2e/memory-without-model.e2e.test.ts).
 */
export const COMPILED_HANDLE = "velesdb-hooks:compiled-from-transcript";
/** At most this many items of each list are carried from one session's state into the next one's. */
const CARRIED = { facts: 40, evidence: 40, pending: 10, other: 20 } as const;

/** isCompiledByHook(working) → the state carries the hook's mark (COMPILED_HANDLE). */
export function isCompiledByHook(working: WorkingState | undefined): boolean {
  const evidence = working?.exact_evidence;
  return (
    Array.isArray(evidence) && evidence.some((e) => (e as { handle?: unknown } | null)?.handle === COMPILED_HANDLE)
  );
}

/** The marker file of a session: `<kind>-<session>` in the private state, or undefined without usable state. */
function sessionMarker(input: HookInput, kind: string): string | undefined {
  const store = input.state();
  return store.safe ? markerPath(store, input.kind(kind), input.sessionId ?? UNKNOWN_SESSION) : undefined;
}

/**
 * rememberInherited(input, session): SessionStart loaded another session's state for this one;
 * its compiled saves start from that state (a session that only passes through must not bury
 * what it was handed: test/e2e/memory-handoff.e2e.test.ts, proof 2). Best effort.
 */
export function rememberInherited(input: HookInput, session: string): void {
  const file = sessionMarker(input, "inherited");
  if (file) writePrivateFile(file, `${session}\n`);
}

/**
 * saveCompiledContext(open, input, slot, transcript) → the session's compiled working context
 * saved under its own slot, or why it was kept or not saved. A slot holding a state without the
 * hook's mark is the model's save, the better source, and is left as it is; otherwise the
 * compiled state is written over the hook's own, starting from the state SessionStart handed this
 * session (docs/working-context.md "Saved by the hook").
 */
export async function saveCompiledContext(
  open: OpenMemory,
  input: HookInput,
  slot: MemorySlot,
  transcript: ReadTranscript,
): Promise<SaveOutcome> {
  const ms = memoryDeadlineMs(input.env, "VELESDB_HOOKS_SAVE_MS", DEFAULT_SAVE_MS);
  if (ms === 0) return { kind: "not saved", cause: "VELESDB_HOOKS_SAVE_MS is 0", quiet: true };
  const lastUser = lastTurn(transcript.turns, "user");
  if (lastUser === undefined) return { kind: "not saved", cause: "the transcript holds no user turn yet", quiet: true };
  const versionFile = sessionMarker(input, "autosave");
  const version = versionFile ? readPrivateFile(versionFile, 4096) : undefined;
  if (version?.state === "present" && version.content.trim() === transcript.version) return { kind: "saved" };
  const opened = await open(input.env, input.cwd, Date.now() + ms);
  if (!opened.ok) return { kind: "not saved", cause: opened.cause, quiet: opened.unconfigured };
  const { memory } = opened;
  try {
    const own = await memory.call("load_working_context", { project: slot.project, session: slot.session });
    if (!own.ok) return { kind: "not saved", cause: own.cause };
    const ownState = own.value.found === true ? (own.value.working as WorkingState | null) : undefined;
    if (ownState && !isCompiledByHook(ownState))
      return { kind: "kept", why: "the model saved this session's working context itself" };
    const inheritedFile = sessionMarker(input, "inherited");
    const inheritedRead = inheritedFile ? readPrivateFile(inheritedFile, 4096) : undefined;
    const inheritedSlot = inheritedRead?.state === "present" ? inheritedRead.content.trim() : "";
    let inherited: WorkingState | undefined;
    if (inheritedSlot !== "" && inheritedSlot !== slot.session) {
      const base = await memory.call("load_working_context", { project: slot.project, session: inheritedSlot });
      if (base.ok && base.value.found === true) inherited = base.value.working as WorkingState;
    }
    const compiled = await memory.call("compile_transcript", {
      query: cutLine(lastUser, LINE_CHARS),
      token_budget: COMPILE_TOKEN_BUDGET,
      transcript: transcript.jsonl,
      project: slot.project,
    });
    if (!compiled.ok) return { kind: "not saved", cause: compiled.cause };
    const working = compiledWorkingState(compiled.value, transcript.turns, inherited);
    const saved = await memory.call("save_working_context", { project: slot.project, session: slot.session, working });
    if (!saved.ok) return { kind: "not saved", cause: saved.cause };
    if (versionFile) writePrivateFile(versionFile, `${transcript.version}\n`);
    return { kind: "saved" };
  } finally {
    memory.close();
  }
}

/**
 * compiledWorkingState(compiled, turns, inherited) → the WorkingContext velesdb-memory 0.17.0
 * takes (src/context/model.rs), built on the state this session was handed (`inherited`, its
 * newest items, CARRIED): its goal, else the latest request; the latest request (when the goal
 * is another) and the last assistant turn as pending actions; each paragraph of
 * compile_transcript's budgeted content as a verified fact, with its role where it is a whole
 * turn; its source handles as evidence (retrieve_context_source returns the original of each),
 * and the hook's mark (COMPILED_HANDLE). The fragment ids come from the handles: the JSON
 * numbers beside them are u64s that a JSON parse rounds. Decisions are only carried: they are
 * pointers to decisions a model took, and the compiler's own "preserve.default" is not one.
 */
export function compiledWorkingState(
  compiled: Record<string, unknown>,
  turns: readonly TranscriptTurn[],
  inherited?: WorkingState,
): Record<string, unknown> {
  const context = (typeof compiled.context === "object" && compiled.context !== null ? compiled.context : {}) as {
    content?: unknown;
    sources?: unknown;
  };
  const content = typeof context.content === "string" ? context.content : "";
  // The compiled content joins the kept turns with blank lines and drops their roles: a paragraph
  // that is a whole turn gets its role back, so the next session reads who said it.
  const roleOf = new Map<string, string>();
  for (const turn of turns) roleOf.set(turn.content.trim(), turn.role);
  const facts = content
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== "")
    .map((paragraph) => {
      const role = roleOf.get(paragraph);
      return { text: cutLine(role ? `${role}: ${paragraph}` : paragraph, FACT_CHARS) };
    });
  const evidence: Array<{ fragment_id: string; handle: string }> = [];
  for (const source of Array.isArray(context.sources) ? context.sources : []) {
    const handle = (source as { handle?: unknown } | null)?.handle;
    const id = typeof handle === "string" ? /^ctx:\/\/source\/(\d{1,20})$/.exec(handle)?.[1] : undefined;
    if (id !== undefined) evidence.push({ fragment_id: id, handle: handle as string });
  }
  const request = cutLine(lastTurn(turns, "user") ?? "", LINE_CHARS);
  const inheritedGoal =
    typeof inherited?.goal === "string" && inherited.goal.trim() !== "" ? inherited.goal : undefined;
  const lastStep = lastTurn(turns, "assistant");
  const pending = [
    ...carried(inherited?.pending_actions, CARRIED.pending),
    ...(inheritedGoal !== undefined ? [`Latest request: ${request}`] : []),
    ...(lastStep === undefined ? [] : [`Last step reported: ${cutLine(lastStep, LINE_CHARS)}`]),
  ];
  const inheritedEvidence = carried(inherited?.exact_evidence, CARRIED.evidence).filter(
    (e) => (e as { handle?: unknown } | null)?.handle !== COMPILED_HANDLE,
  );
  return {
    goal: inheritedGoal ?? request,
    active_constraints: carried(inherited?.active_constraints, CARRIED.other),
    verified_facts: [...carried(inherited?.verified_facts, CARRIED.facts), ...facts].slice(-CARRIED.facts),
    open_hypotheses: carried(inherited?.open_hypotheses, CARRIED.other),
    decisions: carried(inherited?.decisions, CARRIED.other),
    exact_evidence: [
      { fragment_id: "0", handle: COMPILED_HANDLE },
      ...[...inheritedEvidence, ...evidence].slice(-CARRIED.evidence),
    ],
    pending_actions: pending.slice(-CARRIED.pending),
  };
}

/** carried(list, n) → the newest n items of a list of the inherited state (an absent or odd field: none). */
function carried(list: unknown, n: number): unknown[] {
  return Array.isArray(list) ? list.slice(-n) : [];
}

function lastTurn(turns: readonly TranscriptTurn[], role: string): string | undefined {
  for (let i = turns.length - 1; i >= 0; i--)
    if (turns[i]!.role === role && turns[i]!.content.trim() !== "") return turns[i]!.content;
  return undefined;
}

/** cutLine(text, n) → text on one line, at most n characters, "…" where it was cut (never half a surrogate pair). */
function cutLine(text: string, n: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= n) return line;
  let cut = line.slice(0, n - 1);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/**
 * The tail of a transcript the hook reads, at most: the latest turns are the ones a next session
 * needs, and a transcript grows without bound (a long Claude Code session writes tens of MB).
 */
const TRANSCRIPT_TAIL_BYTES = 1024 * 1024;
/** What compile_transcript gets inline, at most: the newest whole turns that fit (its own cap is 8 MiB). */
const COMPILE_INPUT_BYTES = 256 * 1024;

/**
 * saveFromTranscript(open, input, transcriptPath, format) → saveCompiledContext on the tail of the
 * host's transcript, read as this host writes it (src/core/transcript.ts), or why not.
 */
export async function saveFromTranscript(
  open: OpenMemory,
  input: HookInput,
  transcriptPath: string,
  format: string,
): Promise<SaveOutcome> {
  const identity = resolveProjectIdentity(input.cwd);
  if (!identity.autoSave) return { kind: "not saved", cause: "auto_save is false in .velesdb-hooks.json", quiet: true };
  const transcript = await readTranscript(input, transcriptPath, format);
  if (!transcript.ok) return { kind: "not saved", cause: transcript.problem, quiet: transcript.quiet };
  const slot: MemorySlot = { project: identity.project, session: sessionSlot(identity.session, input.sessionId) };
  return saveCompiledContext(open, input, slot, transcript);
}

/**
 * readTranscript(input, path, format) → the tail of the host's transcript as turns and as
 * compile_transcript's JSONL, with the payload's `last_assistant_message` added where the file
 * lags behind it (transcript.ts withLastAssistantMessage), or why not in one line. The path is
 * the payload's: read as transcript.ts reads any file it did not write (no link, ours, bounded).
 */
async function readTranscript(
  input: HookInput,
  transcriptPath: string,
  format: string,
): Promise<
  (ReadTranscript & { readonly ok: true }) | { readonly ok: false; readonly problem: string; readonly quiet?: boolean }
> {
  const { compileTranscriptInput, isTranscriptFormat, readTranscriptTail, transcriptTurns, withLastAssistantMessage } =
    await import("./transcript.ts");
  if (!isTranscriptFormat(format)) return { ok: false, problem: `no reader for the transcript format ${format}` };
  const named = readerJson(transcriptPath);
  const st = fs.lstatSync(transcriptPath, { throwIfNoEntry: false });
  // Copilot CLI writes its events.jsonl when the run exits, after agentStop (transcript.ts
  // fixtures README): a file not there yet is the host's timing, not a fault.
  if (st === undefined) return { ok: false, problem: `the transcript ${named} does not exist yet`, quiet: true };
  const tail = readTranscriptTail(transcriptPath, TRANSCRIPT_TAIL_BYTES);
  if (!tail.ok) return { ok: false, problem: `the transcript ${named} ${tail.problem}` };
  const turns = withLastAssistantMessage(
    transcriptTurns(format, tail.text).filter((turn) => !(turn.role === "user" && isOurContinuation(turn.content))),
    input.payload.last_assistant_message,
  );
  const jsonl = compileTranscriptInput(turns, COMPILE_INPUT_BYTES);
  if (jsonl === "") return { ok: false, problem: `the transcript ${named} holds no conversation yet`, quiet: true };
  return { ok: true, turns, jsonl, version: `${st.size}:${st.mtimeMs}` };
}
