// The shape every host module has: its profile (state kinds, state location), its events
// (kebab-case argv name → rule; the wire name comes from the host's descriptor,
// src/hosts/descriptors/) and one pure encoder. Adding an event is one row in the descriptor and
// one in the host file; adding a host is its descriptor, this module, one row in
// src/hosts/index.ts and one in src/hosts/loaders.ts (the lazy table the entry point uses; a test
// checks they agree).
import type { FailurePolicy } from "../core/failure.ts";
import { joinNotes, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput, HostProfile } from "../core/hook-input.ts";
import { stringField } from "../core/payload.ts";
import type { OpenMemory, SavedByHook } from "../core/session-memory.ts";
import type { FieldPath } from "../core/json-bytes.ts";
import type { Payload } from "../core/payload.ts";
import { defaultStateDirectory } from "../core/state.ts";
import type { ToolNamer } from "../core/texts.ts";
import { shownToolName, type EventNames, type HostDescriptor } from "./descriptors/descriptor.ts";

export interface HookEvent {
  /** The event name the host sends in `hook_event_name` and registers under. */
  readonly wireName: string;
  /**
   * What a rule that throws answers (src/core/failure.ts): "open" passes (advisory hooks);
   * "closed" refuses in an opted-in repository (the edit guards).
   */
  readonly failure: FailurePolicy;
  readonly run: (input: HookInput) => Decision | Promise<Decision>;
  /**
   * A payload field the rule reads as bytes: in a payload of 1 MiB or more, a long string there
   * arrives as a Utf8Literal (src/core/json-bytes.ts), never made a string
   * (docs/performance/2026-12-02-compression-memory.md).
   */
  readonly bytesField?: FieldPath;
}

export interface HostModule {
  /** The host as data, shared with the installer (src/hosts/descriptors/). */
  readonly descriptor: HostDescriptor;
  readonly profile: HostProfile;
  readonly events: Readonly<Record<string, HookEvent>>;
  /** encode(wireName, decision) → the exact bytes and exit code this host honours. */
  readonly encode: (wireName: string, decision: Decision) => HookAnswer;
  /** True when the payload names its event in `hook_event_name` (Claude, Codex, dsh). */
  readonly payloadNamesEvent: boolean;
  /**
   * The exit code of a usage error (unknown event, extra argument) for this host; default 64
   * (docs/contract.md §2), which hosts treat as a non-blocking error. Gemini CLI denies the tool on any
   * code but 0 and 1, so it gets 1.
   */
  readonly usageExitCode?: 1;

  /**
   * callerOf(payload, env) → the module to answer with when another host runs this host's
   * registered hooks with its own payloads (Cursor runs Claude Code's), else undefined. It has
   * the same events; its rules and encoder are the caller's. Loaded lazily: only that caller pays.
   */
  readonly callerOf?: (payload: Payload, env: NodeJS.ProcessEnv) => Promise<HostModule | undefined>;
}

/** A host's rule for one event; its wire name is the descriptor's. */
export type EventRule = Omit<HookEvent, "wireName">;

/** SessionStart as every host shares it, under its own wire name (docs/contract.md §5.1). */
export const SESSION_START_EVENT: EventRule = {
  failure: "open",
  run: async (input) => {
    // The hook loads the working context itself through the store's broker (docs/working-context.md#loaded-by-the-hook): the
    // connection is src/mcp's, the rule core's, which never imports a socket.
    const [{ sessionStartDecision }, open] = await Promise.all([import("../core/lifecycle.ts"), memoryOpener(input)]);
    return sessionStartDecision(input, open);
  },
};

/**
 * Stop with the learning loop, shared likewise (docs/contract.md §5.2, §6.5). Where the host
 * passes its transcript, the hook first saves a compiled working context itself (docs/working-context.md#saved-by-the-hook), so a
 * session whose model never saves is still resumable; the reminder still asks the model once.
 */
export const STOP_EVENT: EventRule = {
  failure: "open",
  run: async (input) => {
    const saved = await savedFromTranscript(input);
    return (await import("../core/checkpoint.ts")).stopDecision(input, saved);
  },
};

/** PreCompact with summariser instructions (Claude Code, Qwen Code, OpenCode): the transcript is saved first, while it is still whole. */
export const PRE_COMPACT_EVENT: EventRule = {
  failure: "open",
  run: async (input) => {
    const saved = await savedFromTranscript(input);
    const decision = (await import("../core/lifecycle.ts")).preCompactDecision(input);
    return saved.note ? { ...decision, note: joinNotes(decision.note, saved.note) } : decision;
  },
};

/**
 * memoryOpener(input) → the broker connection when shared memory is set up for this store; else
 * an opener that answers why not, and no client code is loaded.
 */
async function memoryOpener(input: HookInput): Promise<OpenMemory> {
  // Loaded here, not with this module: host.ts is in every hook's first chunk, and each chunk a
  // hook evaluates costs it heap blocks (src/hosts/loaders.ts, test/hot-path.test.ts).
  const { sharedMemoryAbsent } = await import("../core/mcp-runtime.ts");
  const absent = sharedMemoryAbsent(input.env, input.cwd);
  if (absent !== undefined) return async () => ({ ok: false, cause: absent.why, unconfigured: absent.unset });
  return (await import("../mcp/memory-client.ts")).openMemory;
}

/**
 * savedFromTranscript(input) → whether the model saved this session's working context itself,
 * after the hook saved a compiled one where it could, and why not in one note. Only hosts whose payload names a transcript
 * the hook can read (HostProfile.transcriptFormat) and stores with shared memory set up.
 */
async function savedFromTranscript(input: HookInput): Promise<SavedByHook> {
  const format = input.host.transcriptFormat;
  const transcript = stringField(input.payload, "transcript_path") ?? stringField(input.payload, "transcriptPath");
  if (format === undefined || transcript === undefined) return { modelSaved: false };
  const open = await memoryOpener(input);
  const { saveFromTranscript } = await import("../core/session-memory.ts");
  let outcome: Awaited<ReturnType<typeof saveFromTranscript>>;
  try {
    outcome = await saveFromTranscript(open, input, transcript, format);
  } catch (error) {
    // The save is advisory: whatever went wrong, Stop and PreCompact answer as before.
    outcome = { kind: "not saved", cause: `internal error: ${(error as Error).message}` };
  }
  if (outcome.kind === "not saved")
    return {
      modelSaved: false,
      note: outcome.quiet ? undefined : `working context not saved by the hook: ${outcome.cause}`,
    };
  return { modelSaved: outcome.kind === "kept" };
}

/**
 * eventsOf(CLAUDE, {"session-start": SESSION_START_EVENT, …}) → the host's event table: each rule
 * under the wire name its descriptor gives, in the order of `rules`. The type asks for a rule for
 * every event of the descriptor and no other.
 */
export function eventsOf<D extends HostDescriptor>(
  descriptor: D,
  rules: { readonly [K in EventNames<D>]: EventRule },
): Readonly<Record<string, HookEvent>> {
  const events: Record<string, HookEvent> = {};
  for (const [argv, rule] of Object.entries(rules) as Array<[EventNames<D>, EventRule]>) {
    events[argv] = { ...rule, wireName: descriptor.events[argv]!.wire };
  }
  return events;
}

/** mcpToolOf(CLAUDE) → the HostProfile.mcpTool its descriptor spells. */
export function mcpToolOf(descriptor: HostDescriptor): ToolNamer {
  return (tool) => shownToolName(descriptor, tool);
}

/**
 * tempStateProfile("codex", "codex-") → a host whose state lives in the user's private temp
 * directory (the bash reference's location), whose payload names the session in `session_id`,
 * and whose Stop sets `stop_hook_active` on a continuation.
 */
export function tempStateProfile(name: string, statePrefix: string, mcpTool: ToolNamer): HostProfile {
  return {
    name,
    statePrefix,
    mcpTool,
    stateDirectory: (env) => defaultStateDirectory(env),
    stopFlagUnreliable: false,
    sessionIdField: "session_id",
    checkpointsEdits: true,
  };
}

/** `{"hookSpecificOutput":{"hookEventName":…, …fields}}` — the form Claude and Codex share. */
export function hookSpecificOutput(hookEventName: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName, ...fields } };
}
