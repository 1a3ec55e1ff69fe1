// The one scripted session scripts/capture-transcripts.ts drives each real host through, whose
// transcripts are fixtures/transcripts/<host>/; test/transcript.test.ts asserts the turns taken
// from them against the same words.

export const PROMPT = "What do the notes in this folder say?";
/** A reasoning block of the first reply, where the host's API has one: it must never become a turn. */
export const THINKING = "REASONING-NOT-FOR-THE-CONTEXT: the notes file should hold the answer.";
export const ASSISTANT_FIRST = "Let me read the notes file first.";
export const TOOL_COMMAND = "cat notes.txt";
/** What notes.txt holds, so what TOOL_COMMAND prints. */
export const NOTE_TEXT = "the build is green since tuesday";
export const ASSISTANT_FINAL = "The notes say the build is green since tuesday.";
/** The answer to the continuation our Stop hook asks for. */
export const CONTINUATION = "Checkpoint noted, nothing else to save.";
/** The prompt of the session resumed after a compaction (Claude Code) or resumed (Copilot), and its answer. */
export const PROMPT_AFTER_COMPACT = "Anything else in the notes?";
export const ANSWER_AFTER_COMPACT = "Nothing else: that line is the whole file.";
/** The summariser's answer when a host compacts. */
export const SUMMARY = "SUMMARY: the user asked what the notes say; they say the build is green since tuesday.";
/** What the case directory (a fresh /tmp/vh-e2e-… of the capturing machine) becomes in a fixture. */
export const CASE_PLACEHOLDER = "/CASE";
