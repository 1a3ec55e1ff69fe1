// The shape every host module has: its profile (state kinds, state location), its events
// (kebab-case argv name → wire name and rule) and one pure encoder. Adding an event is one
// row in a host file; adding a host is one file plus one row in src/hosts/index.ts.
import type { Decision, HookAnswer } from "../core/decision.ts";
import type { HookInput, HostProfile } from "../core/hook-input.ts";

export interface HookEvent {
  /** The event name the host sends in `hook_event_name` and registers under. */
  readonly wireName: string;
  readonly run: (input: HookInput) => Decision | Promise<Decision>;
}

export interface HostModule {
  readonly profile: HostProfile;
  readonly events: Readonly<Record<string, HookEvent>>;
  /** encode(wireName, decision) → the exact bytes and exit code this host honours. */
  readonly encode: (wireName: string, decision: Decision) => HookAnswer;
  /** True when the payload names its event in `hook_event_name` (Claude, Codex, dsh). */
  readonly payloadNamesEvent: boolean;
}

/** `{"hookSpecificOutput":{"hookEventName":…, …fields}}` — the form Claude and Codex share. */
export function hookSpecificOutput(hookEventName: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName, ...fields } };
}
