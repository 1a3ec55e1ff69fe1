// The lifecycle rules of docs/contract.md §5: load guidance at SessionStart, one save reminder at Stop,
// summariser instructions at PreCompact. All three are advisory, so every surprise (bad
// payload, missing config, broken state) degrades to guidance with defaults, never to a crash
// or a block — with one exception written into the Stop rule: it must let the session end.
import { joinNotes, pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { resolveProjectIdentity, sessionSlot, type ProjectIdentity } from "./identity.ts";
import { stringField, UNKNOWN_SESSION } from "./payload.ts";
import { markerPath, readPrivateFile, writePrivateFile } from "./state.ts";
import type { LoadOutcome, OpenMemory, SavedByHook } from "./session-memory.ts";
import {
  loadedContextGuidance,
  loadGuidance,
  nothingSavedGuidance,
  saveGuidance,
  stateFailureDetail,
  stateUnavailableNotice,
  stateUnavailableUserLine,
  summariserInstructions,
  windsurfPromptReminder,
  type MemorySlot,
  type StateFailure,
} from "./texts.ts";

/**
 * memorySlot(input, identity) → the working-context slot this host session loads and saves
 * (its own: identity.ts sessionSlot), with the tools named as this host names them.
 */
export function memorySlot(
  input: HookInput,
  identity: { readonly project: string; readonly session: string },
): MemorySlot {
  return {
    project: identity.project,
    session: sessionSlot(identity.session, input.sessionId),
    tool: input.host.mcpTool,
  };
}

/**
 * SessionStart (docs/contract.md §5.1): the load guidance, plus the post-compaction note on
 * `source: "compact"`, plus one line when the local velesdb-memory daemon is out of date.
 */
export async function sessionStartDecision(input: HookInput, open?: OpenMemory): Promise<Decision> {
  const identity = resolveProjectIdentity(input.cwd);
  const compaction =
    stringField(input.payload, "source") === "compact"
      ? { transcriptPath: stringField(input.payload, "transcript_path"), trigger: lastCompactionTrigger(input) }
      : undefined;
  const slot = memorySlot(input, identity);
  // Only SessionStart asks the daemon and the broker: Stop and PreCompact, which share this
  // module, never evaluate the probe's code (docs/contract.md §12). Both run at once.
  const [freshness, memory] = await Promise.all([
    import("./freshness.ts").then((m) => m.freshnessNotice(input.env)),
    open
      ? import("./session-memory.ts")
          .then((m) => m.loadWorkingContext(open, input, slot, identity))
          // The load is advisory: whatever went wrong, the guidance as before (never a bare pass).
          .catch((error: Error): LoadOutcome => ({ kind: "not loaded", cause: `internal error: ${error.message}` }))
      : undefined,
  ]);
  const text =
    memory?.kind === "loaded"
      ? loadedContextGuidance(slot, memory.loaded, compaction)
      : memory?.kind === "nothing saved"
        ? nothingSavedGuidance(slot, compaction)
        : loadGuidance(slot, compaction);
  // Fail open (docs/working-context.md#loaded-by-the-hook): the instruction to call the tool, as before, and why in one stderr line
  // — unless no shared broker is set up at all (an agent wired to velesdb-memory directly), which
  // is a choice of the user's, not a failure to report at every session start.
  const why =
    memory?.kind === "not loaded" && !memory.unconfigured
      ? `working context not loaded by the hook: ${memory.cause}`
      : undefined;
  return {
    kind: "addContext",
    text: freshness ? `${text}\n${freshness}` : text,
    note: joinNotes(input.inputProblem, why) || undefined,
  };
}

/** The trigger PreCompact recorded for this session, when its marker is readable. */
function lastCompactionTrigger(input: HookInput): string | undefined {
  const store = input.state();
  if (!store.safe) return undefined;
  const read = readPrivateFile(markerPath(store, input.kind("precompact"), sessionOf(input)));
  return read.state === "present" ? read.content.trim() : undefined;
}

/** PreCompact (docs/contract.md §5.3): instructions for the summariser; never blocks, never needs state. */
export function preCompactDecision(input: HookInput): Decision {
  const identity = resolveProjectIdentity(input.cwd);
  const trigger = stringField(input.payload, "trigger");
  const store = input.state();
  if (store.safe && (trigger === "manual" || trigger === "auto")) {
    // Best effort: the marker only lets SessionStart(compact) name the trigger.
    writePrivateFile(markerPath(store, input.kind("precompact"), sessionOf(input)), `${trigger}\n`);
  }
  const userHasInstructions = (stringField(input.payload, "custom_instructions") ?? "").trim() !== "";
  return {
    kind: "summariserInstructions",
    text: summariserInstructions(
      memorySlot(input, identity),
      stringField(input.payload, "transcript_path"),
      userHasInstructions,
    ),
    note: input.inputProblem,
  };
}

/**
 * The prompt-time reminder (Windsurf pre_user_prompt, docs/contract.md §4.3): load and save guidance once
 * per session, then a pass. Without a session id or usable state it comes every time: it is
 * advisory, and a repeated reminder costs a few lines where a lost one costs the session.
 */
export function promptReminderDecision(input: HookInput): Decision {
  // The rules file (the channel that reaches Cascade) names the configured slot: so does this.
  const identity = resolveProjectIdentity(input.cwd);
  const reminder: Decision = {
    kind: "addContext",
    text: windsurfPromptReminder({ project: identity.project, session: identity.session, tool: input.host.mcpTool }),
    note: input.inputProblem,
  };
  if (input.sessionId === undefined) return reminder;
  const store = input.state();
  if (!store.safe) return reminder;
  const marker = markerPath(store, input.kind("prompt"), input.sessionId);
  if (readPrivateFile(marker).state !== "absent") return pass(input.inputProblem);
  writePrivateFile(marker, "1\n");
  return reminder;
}

/**
 * Stop without enforcement (docs/contract.md §5.2): continue once per session and host kind, then
 * pass. When the model has saved this session's working context already (the hook's own save
 * found it: docs/working-context.md#saved-by-the-hook), the reminder would cost a model turn for nothing: it passes.
 */
export function genericStopDecision(
  input: HookInput,
  identity: ProjectIdentity = resolveProjectIdentity(input.cwd),
  byHook: SavedByHook = { modelSaved: false },
): Decision {
  if (byHook.modelSaved) return pass(input.inputProblem);
  const decision = reminderOnce(input, identity);
  return byHook.note ? { ...decision, note: joinNotes(decision.note, byHook.note) } : decision;
}

function reminderOnce(input: HookInput, identity: ProjectIdentity): Decision {
  const store = input.state();
  if (!store.safe)
    return stopOnStateFailure(input, identity, {
      access: "use",
      cause: store.cause,
      path: store.dir,
      problem: store.problem,
      stateDir: store.dir,
    });
  const marker = markerPath(store, input.kind("stop"), sessionOf(input));
  const seen = readPrivateFile(marker);
  if (seen.state === "present") return pass(input.inputProblem);
  if (seen.state !== "absent")
    return stopOnStateFailure(input, identity, {
      access: "read",
      cause: seen.state,
      path: seen.path,
      problem: seen.problem,
      stateDir: store.dir,
    });
  const written = writePrivateFile(marker, "1\n");
  if (!written.ok)
    return stopOnStateFailure(input, identity, {
      access: "write",
      cause: written.cause,
      path: marker,
      problem: written.problem,
      stateDir: store.dir,
    });
  return { kind: "continue", text: saveGuidance(memorySlot(input, identity)), note: input.inputProblem };
}

/**
 * stopOnStateFailure(input, identity, failure) → what Stop answers when its state is unusable.
 * State can stay broken for the whole session, and every turn ends in a Stop: a continuation
 * here costs a paid model turn each time (docs/decisions.md#the-learning-loop). So only an opted-in repository, whose
 * checkpoints are lost, is told (one line for the user elsewhere, where the host can show
 * one), and only where the host proves this Stop is not already a continuation: Codex has no
 * continuation cap and the DeepSeek bridge never sets `stop_hook_active`.
 */
export function stopOnStateFailure(input: HookInput, identity: ProjectIdentity, failure: StateFailure): Decision {
  const note = `state unavailable: ${stateFailureDetail(failure)}`;
  if (!identity.enforceLearningLoop) return { kind: "pass", note, userMessage: stateUnavailableUserLine(failure) };
  if (input.host.stopFlagUnreliable || input.payload.stop_hook_active === true) return pass(note);
  return { kind: "continue", text: stateUnavailableNotice(memorySlot(input, identity), failure), note };
}

/** The host session id, or `unknown-session` for lifecycle hooks (docs/contract.md §3.1). */
export function sessionOf(input: HookInput): string {
  return input.sessionId ?? UNKNOWN_SESSION;
}
