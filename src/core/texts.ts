// Every sentence a model reads comes from this module (SPEC §3.5), so the product's voice can
// be reviewed, and tested, in one place. The texts state facts about the tools rather than
// issue orders: hosts and models discount imperative "system" phrasing as possible prompt
// injection, and a fact about what a call returns is what actually changes what a model does.
// Identities are quoted as JSON strings, so a project name holding a quote stays one argument.

export interface MemorySlot {
  readonly project: string;
  readonly session: string;
}

const quoted = (value: string): string => JSON.stringify(value);

/** loadCall({project:"p",session:"s"}) → `load_working_context(project="p", session="s")`. */
export const loadCall = (slot: MemorySlot): string =>
  `load_working_context(project=${quoted(slot.project)}, session=${quoted(slot.session)})`;

/** saveCall({project:"p",session:"s"}) → `save_working_context(project="p", session="s")`. */
export const saveCall = (slot: MemorySlot): string =>
  `save_working_context(project=${quoted(slot.project)}, session=${quoted(slot.session)})`;

const FEEDBACK_LOOP =
  "Each recalled memory carries an id_str; feedback(id, true|false) with that id_str tells " +
  "velesdb-memory whether the memory helped (true) or misled (false), and later recalls rank by it.";

export interface CompactionNote {
  /** The transcript file the host compacted, when the payload named it. */
  readonly transcriptPath?: string;
  /** "manual" or "auto", when PreCompact recorded which trigger ran. */
  readonly trigger?: string;
}

/** The SessionStart context: how to load this repository's working context. */
export function loadGuidance(slot: MemorySlot, compaction?: CompactionNote): string {
  const lines = [
    `velesdb-memory keeps a working context for this repository under project ${quoted(slot.project)}, session slot ${quoted(slot.session)}.`,
    `${loadCall(slot)} returns {found, working, other_sessions}. With found: true, working holds the saved state: goal, decisions, verified facts and pending actions.`,
    "found: false means nothing is saved under that exact project and session pair; other_sessions lists the session slots that do exist for the project (it is filled on hits too), so a near-identical name there usually means a mistyped session id.",
    `recall_fused finds earlier decisions and incidents about a code area before it changes. ${FEEDBACK_LOOP}`,
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
    parts.push(`compile_transcript on the transcript file ${quoted(compaction.transcriptPath)} recovers detail the summary dropped.`);
  }
  return parts.join(" ");
}

/** The generic Stop continuation (SPEC §5.2): save before the session ends. */
export function saveGuidance(slot: MemorySlot): string {
  return [
    `Before this session ends, ${saveCall(slot)} stores the working state for the next session: the goal, the decisions taken and why, the facts verified, and the actions still pending.`,
    FEEDBACK_LOOP,
    "This reminder comes once per session; after the save (or when nothing changed), stopping is fine.",
  ].join("\n");
}

/** Claude PreCompact stdout: appended by the host to the summariser's instructions (SPEC §5.3). */
export function summariserInstructions(slot: MemorySlot, transcriptPath?: string, userHasInstructions = false): string {
  const recovery = transcriptPath
    ? ` If detail is missing, compile_transcript on ${quoted(transcriptPath)} recovers it from the full transcript.`
    : " If detail is missing, compile_transcript on this session's transcript file recovers it.";
  const lines = [
    "Keep these verbatim in the summary: the goal, the constraints, the verified facts, the decisions and their reasons, exact values (numbers, identifiers, versions, error codes), file paths, and the pending actions.",
    `End the summary with this line for the agent that continues: "Working context: ${saveCall(slot)} saves the state above.${recovery}"`,
  ];
  if (userHasInstructions) lines.push("The user's own compaction instructions above take precedence where they differ.");
  return lines.join("\n");
}

/** A Stop continuation caused by broken state (SPEC §6.5): the session can still end. */
export function stateUnavailableNotice(slot: MemorySlot, problem: string): string {
  return [
    `velesdb-hooks state is unavailable (${problem}), so this session's reminders cannot be tracked.`,
    `${saveCall(slot)} stores the working state for the next session.`,
    "This notice does not repeat on the next stop.",
  ].join("\n");
}
