// Every sentence a model reads comes from this module (docs/contract.md §3.5), so the product's voice can
// be reviewed, and tested, in one place. The texts state facts about the tools rather than
// issue orders: hosts and models discount imperative "system" phrasing as possible prompt
// injection, and a fact about what a call returns is what actually changes what a model does.
// Identities are quoted as JSON strings, so a project name holding a quote stays one argument,
// with every character that ends or hides a line escaped (readerJson below).

export interface MemorySlot {
  readonly project: string;
  readonly session: string;
  /**
   * How this host shows velesdb-memory's tools to its model (HostProfile.mcpTool): a host's
   * tool search finds `mcp__velesdb-memory__load_working_context`, not the bare name
   * (docs/working-context.md#tool-names-the-hosts-tool-search-finds). Bare when absent (the installer's Windsurf rules, which no host prefixes).
   */
  readonly tool?: ToolNamer;
}

/** toolName("recall_fused") → that tool as one host names it: `mcp__velesdb-memory__recall_fused`. */
export type ToolNamer = (tool: string) => string;
const bare: ToolNamer = (tool) => tool;
const namer = (slot: { readonly tool?: ToolNamer } | undefined): ToolNamer => slot?.tool ?? bare;

/**
 * readerJson(value) → JSON.stringify(value) with DEL, the C1 controls (U+0085 is a line break,
 * NEL), U+2028/2029 and the bidirectional controls (U+061C, U+200E/200F, U+202A–202E,
 * U+2066–2069) escaped as \uXXXX too: JSON.stringify escapes only C0, and a directory name (the
 * default project) may hold any of them (docs/decisions.md#repository-configuration). A
 * bidirectional override reorders what a terminal shows after it, so a name could pass for
 * another (docs/hardening.md §4.7). The JSON still decodes to the same value, so a project
 * named that way keeps its name in velesdb-memory; it just cannot forge a line of what a model
 * or a terminal reads. `space` indents as JSON.stringify's does (`stats --json`).
 */
export const readerJson = (value: unknown, space?: number): string =>
  escapeUnsafeText(JSON.stringify(value, null, space));

/**
 * escapeUnsafeText(json) → the JSON text with DEL, C1, U+2028/2029 and the bidirectional
 * controls as \uXXXX: the same value once decoded (a JSON text holds them only inside strings).
 * The pattern is a literal in the function, not a module constant: every hook evaluates this
 * module, and a regular expression made at evaluation costs each of them its heap.
 */
const escapeUnsafeText = (json: string): string =>
  json.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, asEscape);

/** asEscape("\u202e") → the six characters `\u202e`. */
const asEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** hasUnsafeText("a\u202eb") → true: the value holds a C0 or C1 control, DEL, a line separator or a bidirectional control. */
export const hasUnsafeText = (value: string): boolean =>
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(value);

const quoted = (value: string): string => readerJson(value);

/**
 * escapeForReader(text) → text with every character that ends, hides or reorders a line for a
 * reader written as \uXXXX: what escapeUnsafeText escapes, and the C0 controls too (plain text,
 * unlike JSON, holds them raw). For stored prose a hook puts in front of a model (a loaded working
 * context): it was written by a model, from tool output anyone can shape.
 */
export const escapeForReader = (text: string): string => escapeUnsafeText(text.replace(/[\u0000-\u001f]/g, asEscape));

/** loadCall({project:"p",session:"s"}) → `load_working_context(project="p", session="s")`, in the host's tool name. */
export const loadCall = (slot: MemorySlot): string =>
  `${namer(slot)("load_working_context")}(project=${quoted(slot.project)}, session=${quoted(slot.session)})`;

/** saveCall({project:"p",session:"s"}) → `save_working_context(project="p", session="s")`, in the host's tool name. */
export const saveCall = (slot: MemorySlot): string =>
  `${namer(slot)("save_working_context")}(project=${quoted(slot.project)}, session=${quoted(slot.session)})`;

const feedbackLoop = (tool: ToolNamer): string =>
  `Each recalled memory carries an id_str; ${tool("feedback")}(id, true|false) with that id_str tells ` +
  "velesdb-memory whether the memory helped (true) or misled (false), and later recalls rank by it.";

export interface CompactionNote {
  /** The transcript file the host compacted, when the payload named it. */
  readonly transcriptPath?: string;
  /** "manual" or "auto", when PreCompact recorded which trigger ran. */
  readonly trigger?: string;
}

/**
 * The SessionStart context: how to load this repository's working context. The load call
 * opens the text: Codex and the DeepSeek bridge keep only a head of it (9 000 characters),
 * so whatever follows may be cut, never the call.
 */
export function loadGuidance(slot: MemorySlot, compaction?: CompactionNote): string {
  const tool = namer(slot);
  const lines = [
    `${loadCall(slot)} returns this session's velesdb-memory working context as {found, working, other_sessions}. With found: true, working holds the saved state: goal, decisions, verified facts and pending actions.`,
    "other_sessions lists the project's other saved slots, most recent first (filled on hits too): each session of this repository saves its own, so with found: false the same call on the first one or two of them returns where the latest sessions left off.",
    `${tool("recall_fused")} finds earlier decisions and incidents about a code area before it changes. ${feedbackLoop(tool)}`,
  ];
  if (compaction) lines.push(compactionNote(slot, compaction));
  return lines.join("\n");
}

/** The working context a hook loaded itself (session-memory.ts), as working-context-block.ts chose it. */
export interface LoadedContext {
  /** The slot the state came from: this session's own, or the most recently saved other one. */
  readonly session: string;
  readonly own: boolean;
  /** The chosen lines, how many items they hold, how many the state had, what was left out. */
  readonly text: string;
  readonly shown: number;
  readonly total: number;
  readonly leftOut: string;
  readonly budget: number;
  /** The project's other slots, most recent first, the loaded one excluded. */
  readonly otherSessions: readonly string[];
  /** The state was compiled by the hook from a transcript (its model did not save one). */
  readonly compiled: boolean;
  /** Another session's state, saved close to the loaded one (two sessions at once), chosen to its share of the budget. */
  readonly companion?: { readonly session: string; readonly text: string };
}

/**
 * The SessionStart context when the hook loaded the working context itself (docs/working-context.md#loaded-by-the-hook): where it
 * came from, the chosen items, what was left out and which call returns it whole, then the save
 * and recall lines of loadGuidance. The provenance opens the text, so a model can tell memory
 * from instructions, and the items follow it: a host that keeps a head keeps both.
 */
export function loadedContextGuidance(slot: MemorySlot, loaded: LoadedContext, compaction?: CompactionNote): string {
  const tool = namer(slot);
  const from = { ...slot, session: loaded.session };
  const compiled = loaded.compiled
    ? "; velesdb-hooks compiled it from that session's transcript, as its model saved none"
    : "";
  const head = loaded.own
    ? `velesdb-hooks loaded this session's velesdb-memory working context at session start (project=${quoted(slot.project)}, session=${quoted(loaded.session)}${compiled}); what it holds:`
    : `velesdb-hooks loaded the velesdb-memory working context that the latest other session of this project saved (project=${quoted(slot.project)}, session=${quoted(loaded.session)}; this session's own slot, ${quoted(slot.session)}, holds none yet${compiled}); what it holds:`;
  const lines = [head, loaded.text];
  lines.push(
    loaded.leftOut === ""
      ? `That is the whole saved state (${loaded.shown} ${loaded.shown === 1 ? "item" : "items"}); ${loadCall(from)} returns it as JSON.`
      : `Left out to stay within ${loaded.budget} characters: ${loaded.leftOut}; ${loadCall(from)} returns the whole state.`,
  );
  if (loaded.companion)
    lines.push(
      `Another session of this project saved its own state close to it (session=${quoted(loaded.companion.session)}), maybe at the same time:`,
      loaded.companion.text,
    );
  if (loaded.otherSessions.length > 0)
    lines.push(
      `Older saved sessions of this project, most recent first: ${loaded.otherSessions.slice(0, 3).map(quoted).join(", ")}; ${tool("load_working_context")} on one of them returns its state.`,
    );
  lines.push(
    `${saveCall(slot)} saves this session's own state (goal, decisions, verified facts, pending actions) for the next session.`,
    `${tool("recall_fused")} finds earlier decisions and incidents about a code area before it changes. ${feedbackLoop(tool)}`,
  );
  if (compaction) lines.push(compactionNote(slot, compaction));
  return lines.join("\n");
}

/** The SessionStart context when the hook asked and velesdb-memory holds no working context for the project. */
export function nothingSavedGuidance(slot: MemorySlot, compaction?: CompactionNote): string {
  const tool = namer(slot);
  const lines = [
    `velesdb-hooks asked velesdb-memory at session start: no session of project ${quoted(slot.project)} has saved a working context yet, so there is nothing to resume.`,
    `${saveCall(slot)} saves this session's state (goal, decisions, verified facts, pending actions) for the next session.`,
    `${tool("recall_fused")} finds earlier decisions and incidents about a code area before it changes. ${feedbackLoop(tool)}`,
  ];
  if (compaction) lines.push(compactionNote(slot, compaction));
  return lines.join("\n");
}

function compactionNote(slot: MemorySlot, compaction: CompactionNote): string {
  const trigger = compaction.trigger === "manual" || compaction.trigger === "auto" ? ` (${compaction.trigger})` : "";
  const parts = [
    `This conversation was just compacted${trigger}: only the summary survived, and detail it left out is no longer in context.`,
    `${saveCall(slot)} now records what survived, so the next session starts from it.`,
  ];
  if (compaction.transcriptPath) {
    parts.push(
      `${namer(slot)("compile_transcript")} on the transcript file ${quoted(compaction.transcriptPath)} recovers detail the summary dropped.`,
    );
  }
  return parts.join(" ");
}

/** The generic Stop continuation (docs/contract.md §5.2): save before the session ends. */
export function saveGuidance(slot: MemorySlot): string {
  return [
    `Before this session ends, ${saveCall(slot)} stores the working state for the next session: the goal, the decisions taken and why, the facts verified, and the actions still pending.`,
    feedbackLoop(namer(slot)),
    "This reminder comes once per session; after the save (or when nothing changed), stopping is fine.",
  ].join("\n");
}

/** Claude PreCompact stdout: appended by the host to the summariser's instructions (docs/contract.md §5.3). */
export function summariserInstructions(slot: MemorySlot, transcriptPath?: string, userHasInstructions = false): string {
  const compile = namer(slot)("compile_transcript");
  const recovery = transcriptPath
    ? ` If detail is missing, ${compile} on ${quoted(transcriptPath)} recovers it from the full transcript.`
    : ` If detail is missing, ${compile} on this session's transcript file recovers it.`;
  const lines = [
    "Keep these verbatim in the summary: the goal, the constraints, the verified facts, the decisions and their reasons, exact values (numbers, identifiers, versions, error codes), file paths, and the pending actions.",
    `End the summary with this line for the agent that continues: "Working context: ${saveCall(slot)} saves the state above.${recovery}"`,
  ];
  if (userHasInstructions)
    lines.push("The user's own compaction instructions above take precedence where they differ.");
  return lines.join("\n");
}

/**
 * Why the state could not serve a Stop: which access failed ("use" when the state directory
 * itself is refused), the cause word, the path, and the problem (which may already name it).
 */
export interface StateFailure {
  readonly access: "use" | "read" | "write";
  readonly cause: string;
  readonly path: string;
  readonly problem: string;
  /** The state directory a user repairs (or removes, so the next hook recreates it). */
  readonly stateDir: string;
}

/**
 * stateFailureDetail(f) → `write failed: storage: "/s/m" cannot be written (EROFS)`: which
 * access failed, and the path named once (the problem may already hold it).
 */
export function stateFailureDetail(failure: StateFailure): string {
  const named = pathNamedIn(failure.problem, failure.path);
  const problem =
    named !== undefined ? failure.problem.replace(named, quoted(named)) : `${quoted(failure.path)} ${failure.problem}`;
  return `${failure.access === "use" ? "unusable" : `${failure.access} failed`}: ${failure.cause}: ${problem}`;
}

/**
 * pathNamedIn(problem, "/ws/.velesdb-hooks/state") → the path itself or the nearest of its
 * ancestors that the problem names ("/ws/.velesdb-hooks is a symlink" blames a component of
 * the workspace state path, not the state directory), else undefined.
 */
function pathNamedIn(problem: string, path: string): string | undefined {
  for (let candidate = path; candidate.length > 1; ) {
    if (problem.includes(candidate)) return candidate;
    const cut = Math.max(candidate.lastIndexOf("/"), candidate.lastIndexOf("\\"));
    if (cut <= 0) return undefined;
    candidate = candidate.slice(0, cut);
  }
  return undefined;
}

// Said truthfully: Claude and Codex end the chain through stop_hook_active, but the next turn's
// first Stop meets the same broken state and continues again (docs/decisions.md#the-learning-loop).
const repeatsUntilRepaired = (failure: StateFailure): string =>
  `This notice comes back at the first stop of every turn until the state directory ${quoted(failure.stateDir)} is repaired (or removed, so the next hook recreates it).`;

/** A Stop continuation caused by broken state in an opted-in repository (docs/contract.md §6.5). */
export function stateUnavailableNotice(slot: MemorySlot, failure: StateFailure): string {
  return [
    `velesdb-hooks state is unavailable (${stateFailureDetail(failure)}), so this repository's learning checkpoints cannot be tracked.`,
    `${saveCall(slot)} stores the working state for the next session.`,
    repeatsUntilRepaired(failure),
  ].join("\n");
}

/** The one line a user sees (Claude's systemMessage) when broken state silences Stop reminders. */
export function stateUnavailableUserLine(failure: StateFailure): string {
  return `velesdb-hooks: Stop reminders are off until the state directory ${quoted(failure.stateDir)} is repaired (${stateFailureDetail(failure)}).`;
}

/**
 * Windsurf pre_user_prompt: load and save in one reminder, since Windsurf has no session-start
 * or Stop hook that reaches the model (docs/contract.md §4.3). Kept for parity; the rules file carries
 * the same guidance to the model.
 */
export function windsurfPromptReminder(slot: MemorySlot): string {
  return `${loadGuidance(slot)}\n${saveGuidance(slot).split("\n")[0]}`;
}

/**
 * The section the installer writes into Windsurf's global rules file: the only channel that
 * reaches Cascade's model every session. It cannot name one project (it is global), so it
 * states how the identity is found, in the terms the hooks use.
 */
export function windsurfRulesGuidance(): string {
  return [
    'velesdb-memory keeps a working context per repository. The project is the `project` field of the `.velesdb-hooks.json` at the workspace root (else the workspace directory\'s name); the session slot is its `session` field (else "rolling").',
    'At the start of a conversation, load_working_context(project="<project>", session="<session>") returns {found, working, other_sessions}: with found: true, working holds the goal, decisions, verified facts and pending actions; found: false means nothing is saved under that exact pair, and other_sessions (filled on hits too) shows the slots that exist, which reveals a mistyped session id.',
    "In a repository whose `.velesdb-hooks.json` sets enforce_learning_loop, the first edit is refused until a velesdb-memory recall_fused about the code area returns a successful result in the same conversation.",
    'Before the conversation ends, save_working_context(project="<project>", session="<session>") stores the goal, decisions with their reasons, verified facts and pending actions for the next one.',
    feedbackLoop(bare),
  ].join("\n");
}

/**
 * The words inside the marker comments around the Windsurf rules section (the model reads the
 * rules file as it is, comments included). The installer finds its section by the marker
 * prefixes `<!-- velesdb-hooks:begin` / `<!-- velesdb-hooks:end`, never by these words, so
 * they may change; a changed note makes the section outdated and install rewrites it.
 */
export function windsurfRulesMarkerNote(): string {
  return "this section is written by velesdb-hooks install and removed by velesdb-hooks uninstall; edits inside it are replaced";
}

/** The SessionStart freshness line (docs/contract.md §5.1): the daemon is older than the published release. */
export function staleDaemonLine(running: string, latest: string): string {
  return `The velesdb-memory server on this machine reports version ${running}; version ${latest} is published, so an upgrade of velesdb-memory is available.`;
}

// --- The learning loop (docs/contract.md §6) ---
// Guard refusals and Stop checkpoints. Each names its cause with a word a user can grep
// (storage, linked, malformed, symlink), the path involved, and what unlocks the edit: a
// refusal that only says "no" gets retried unchanged until the host gives up.

/** One opted-in repository, as the checkpoint manifest lists it. */
export interface RepositorySlot extends MemorySlot {
  readonly root: string;
}

export type GuardProblem =
  | { readonly cause: "recall"; readonly target: string; readonly repository: RepositorySlot }
  /** No recall can succeed: velesdb-memory is known not to answer (src/core/memory-down.ts); `why` is one line. */
  | {
      readonly cause: "memory-down";
      readonly target: string;
      readonly repository: RepositorySlot;
      readonly why: string;
    }
  | { readonly cause: "session"; readonly target: string; readonly repository: RepositorySlot }
  | { readonly cause: "symlink"; readonly target: string; readonly resolved: string }
  | {
      readonly cause: "storage" | "linked" | "malformed";
      readonly target: string;
      readonly path: string;
      readonly problem: string;
      readonly repository?: RepositorySlot;
    };

const UNLOCK_RULE =
  "Only a successful result unlocks: a recall that timed out, failed or returned an error leaves the edit refused.";

function recallCallFor(repository: RepositorySlot | undefined, tool: ToolNamer): string {
  return repository
    ? `a velesdb-memory ${tool("recall_fused")} about this code area with filter {"project": ${quoted(repository.project)}}, run from this session`
    : `a velesdb-memory ${tool("recall_fused")} about this code area, run from this session`;
}

function describeProblem(problem: GuardProblem, tool: ToolNamer): string {
  switch (problem.cause) {
    case "recall":
      return (
        `${quoted(problem.target)} is in repository ${quoted(problem.repository.root)} (project ${quoted(problem.repository.project)}), which requires a recall before its first edit, ` +
        `and this session has no successful recall bound to it yet. ${capitalise(recallCallFor(problem.repository, tool))} unlocks edits there for the rest of the session.`
      );
    case "memory-down":
      return (
        `velesdb-memory is not answering in this session (${oneLineCause(problem.why)}), so no recall can unlock ${quoted(problem.target)} in repository ${quoted(problem.repository.root)}; \`velesdb-hooks doctor\` shows why. ` +
        `Tell the user; while it stays down, retrying this edit lets it through without a recall (the user is told each time), and once the server answers again ${recallCallFor(problem.repository, tool)} is asked for as usual.`
      );
    case "session":
      return (
        `${quoted(problem.target)} is in repository ${quoted(problem.repository.root)}, which requires a recall before its first edit, but this edit arrived without a session id, ` +
        `so no recall can be bound to it (velesdb-hooks needs the host's session_id). ${capitalise(recallCallFor(problem.repository, tool))} unlocks edits once the host sends one.`
      );
    case "symlink":
      return (
        `${quoted(problem.target)} is a symlink to ${quoted(problem.resolved)}, and the link or its target lies in a repository that requires a recall before edits. ` +
        `A recall cannot authorise an edit through a link that crosses that boundary; the same edit through the physical path ${quoted(problem.resolved)} is checked by the recall rule.`
      );
    default:
      return (
        `velesdb-hooks cannot verify recall evidence for ${quoted(problem.target)} (${problem.cause}: ${quoted(problem.path)} ${problem.problem}). ` +
        `Its state is never trusted while it looks like this; removing or repairing ${quoted(problem.path)} and then ${recallCallFor(problem.repository, tool)} unlocks the edit.`
      );
  }
}

/** The PreToolUse / pre_write_code refusal: every problem, then the unlock rule (not when the server is down: no recall can run); tools named as the host names them. */
export function guardRefusal(problems: readonly GuardProblem[], tool: ToolNamer = bare): string {
  const lines = problems.map((problem) => `- ${describeProblem(problem, tool)}`);
  const rule = problems.every((problem) => problem.cause === "memory-down") ? [] : [UNLOCK_RULE];
  return [
    `velesdb-hooks refused this edit (recall before edit).`,
    ...lines,
    ...rule,
    "The edit can be retried unchanged afterwards.",
  ].join("\n");
}

/** The note of an edit let through while velesdb-memory is down (the user's channel, and stderr). */
export function memoryDownPassNote(cause: string): string {
  return `edit allowed without a recall: velesdb-memory is not answering (${oneLineCause(cause)}); run velesdb-hooks doctor`;
}

/** A cause read from a status file or a tool result, as one printable line of at most 300 characters. */
function oneLineCause(cause: string): string {
  const line = cause.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** The refusal when the guard itself failed in an opted-in repository (src/core/failure.ts). */
export function guardInternalErrorRefusal(root: string): string {
  return [
    "velesdb-hooks refused this edit (recall before edit).",
    `- The check for repository ${quoted(root)} failed inside velesdb-hooks, and that repository requires a verified recall before edits, so the edit cannot be let through unchecked.`,
    "The hook's stderr line names the error; retrying the edit runs the check again.",
  ].join("\n");
}

/**
 * The Stop checkpoint (docs/contract.md §6.5): the four stages for every listed repository, then the saves.
 * Each stage names the velesdb-memory tool that performs it: "stored in velesdb-memory" left
 * the model to guess which call that was (docs/decisions.md#the-learning-loop).
 */
export function learningCheckpoint(
  targets: readonly RepositorySlot[],
  warning?: string,
  tool: ToolNamer = bare,
): string {
  const manifest = readerJson(targets.map((t) => ({ project: t.project, session: t.session, root: t.root })));
  const saves = uniqueSlots(targets).map((slot) => `- ${saveCall({ ...slot, tool })}`);
  const lines = [
    `Learning checkpoint for the repositories edited since the last checkpoint: ${manifest}`,
    `1. Recall: ${tool("recall_fused")} over the code areas this batch changed returns the earlier decisions, incidents and patterns they touch.`,
    `2. Decision: ${tool("remember")} keeps each non-trivial decision of this batch together with its reason; a decision kept without its reason cannot be weighed later.`,
    `3. Causality: ${tool("relate")} links each decision to the cause that prompted it, and each incident to its root cause; these links are what ${tool("why")} answers from in a later session.`,
    `4. Feedback: ${tool("feedback")}(id, true|false), with the id_str a recalled memory carried, marks whether that memory helped (true) or misled (false).`,
    `After the four stages, ${tool("save_working_context")} keeps the working context of each listed project:`,
    ...saves,
  ];
  if (warning) lines.push(`Warning: ${warning}`);
  return lines.join("\n");
}

/** stuckQueueWarning(dir, 2) → the checkpoint warning when edit records could not be removed. */
export function stuckQueueWarning(queueDir: string, left: number): string {
  return `the edit queue at ${quoted(queueDir)} could not be emptied (${left} record(s) left) and needs inspection; this checkpoint lists every repository anyway.`;
}

/** The deny reason when a rule gave none (the Codex and Gemini encoders): Codex ignores a deny whose reason is empty. */
export function fallbackRefusal(): string {
  return "velesdb-hooks refused this edit.";
}

/** A Stop continuation when checkpoint state is broken: name it, still ask for the saves. */
export function checkpointStateNotice(slot: MemorySlot, failure: StateFailure): string {
  const verb = failure.access === "write" ? "write" : "read";
  return [
    `velesdb-hooks cannot ${verb} this session's learning checkpoint state (${stateFailureDetail(failure)}); nothing in it was discarded, and it needs inspection.`,
    `${saveCall(slot)} stores the working state for the next session.`,
    repeatsUntilRepaired(failure),
  ].join("\n");
}

function uniqueSlots(targets: readonly RepositorySlot[]): MemorySlot[] {
  const seen = new Map<string, MemorySlot>();
  for (const t of targets) seen.set(JSON.stringify([t.project, t.session]), { project: t.project, session: t.session });
  return [...seen.values()];
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// --- Compression footer (docs/contract.md §8) ---
// Appended to a compiled Bash result. It names what was done (token counts, the fidelity risk
// the compiler reported, how many bytes it read) and where the untouched original is, because
// the compiled view is lossy by design and a model that is not told where the rest lives will
// not look for it. Its byte length counts against the saving (net-gain rule, docs/contract.md §8 gate 11).

export interface CompressionFacts {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly tokensSaved: number;
  /** compile-stdin's own word; a high one ships only when every signal line is in the view (docs/compression.md). */
  readonly risk: "low" | "medium" | "high";
  readonly bytesCompiled: number;
  /** The lines the view had to keep verbatim, all of them in it. */
  readonly signalLines: number;
  /** Our archive for inline outputs; the host's own saved file for persisted ones. */
  readonly archivePath: string;
}

/** compressionFooter(facts) → the paragraph that follows the compiled content. */
export function compressionFooter(facts: CompressionFacts): string {
  return [
    `[velesdb-hooks] The command output above is a compiled view made by velesdb-memory compile-stdin from ${facts.bytesCompiled} bytes: ` +
      `${facts.tokensIn} tokens in, ${facts.tokensOut} tokens out, ${facts.tokensSaved} tokens saved; ` +
      `its ${facts.signalLines} lines of errors, failures and summary are shown verbatim, the rest folded (compile-stdin's fidelity risk: ${facts.risk}).`,
    `The complete original output is saved at ${quoted(facts.archivePath)} and can be read from that file (in parts, if it is large).`,
  ].join("\n");
}

/**
 * The openings of the texts a Stop continues the model with (saveGuidance, learningCheckpoint,
 * stateUnavailableNotice, checkpointStateNotice). Gemini CLI, Factory Droid and Copilot CLI write
 * a continuation into the transcript as a plain user message (fixtures/transcripts/README.md), and
 * the hook's own save must not take its reminder for the user's latest request.
 */
const CONTINUATION_OPENINGS = [
  "Before this session ends, ",
  "Learning checkpoint for the repositories edited since the last checkpoint",
  "velesdb-hooks state is unavailable (",
  "velesdb-hooks cannot ",
] as const;

/**
 * isOurContinuation(turnText) → the text is one of our Stop continuations, as a host recorded it:
 * an opening near its start, since hosts put their own words before it (CodeBuddy Code
 * 2.117.0's "<user_query>Stop hook: …", seen when its second session loaded the first one's
 * checkpoint as that session's latest request: test/hosts/codebuddy/codebuddy.e2e.test.ts).
 */
export function isOurContinuation(text: string): boolean {
  const start = text.trimStart().slice(0, 200);
  return CONTINUATION_OPENINGS.some((opening) => start.includes(opening));
}
