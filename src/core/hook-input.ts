// What every rule receives: the payload as read, the host's profile (state kinds and where its
// state lives), and the environment. The state store is opened lazily and at most once, so a
// hook that never needs state (a non-edit tool at PreToolUse) never touches the filesystem.
import { openStateStore, type StateStore } from "./state.ts";
import { payloadCwd, payloadSessionId, type Payload } from "./payload.ts";
import type { ToolNamer } from "./texts.ts";

/** The per-host facts the shared rules need; each host module declares one. */
export interface HostProfile {
  /** The `<host>` argument: the host's key in the table of src/hosts/index.ts. */
  readonly name: string;
  /** Prefix of every state kind, so hosts never silence each other (docs/contract.md §3.3): "", "codex-", … */
  readonly statePrefix: string;
  /** Where this host's private state lives. */
  stateDirectory(env: NodeJS.ProcessEnv, cwd: string): string;
  /** A directory that must already exist for the state directory to be created below it. */
  stateAnchor?(env: NodeJS.ProcessEnv, cwd: string): string | undefined;
  /** True when the host never sets `stop_hook_active` (dsh): Stop must not continue on state failure. */
  readonly stopFlagUnreliable: boolean;
  /** The payload field naming the host session: `session_id`, Windsurf's `trajectory_id`. */
  readonly sessionIdField: string;
  /**
   * True when the host has a Stop event that can deliver a checkpoint. Without one (Windsurf)
   * the guard records no edit queue: nothing would ever read or empty it.
   */
  readonly checkpointsEdits: boolean;
  /**
   * mcpTool("recall_fused") → the name this host's model sees for a velesdb-memory tool
   * (measured per host, src/hosts/<host>.ts); every hook text names tools through it.
   */
  readonly mcpTool: ToolNamer;
  /**
   * True when the host sends the session-start text again with every model request (Copilot
   * CLI, OpenCode, Kilo Code: measured, src/hosts/<host>.ts): the injected working context gets
   * a smaller default budget there (src/core/session-memory.ts).
   */
  readonly contextResentEachRequest?: boolean;
  /**
   * How this host writes the transcript its payload names (`transcript_path`, Copilot's
   * `transcriptPath`), for the hook's own save at Stop and PreCompact (src/core/transcript.ts);
   * undefined: the host names none the hook can read.
   */
  readonly transcriptFormat?: string;
  /** Called once when a hook had to create the state directory; `createdDirectories` lists what it made. */
  onStateCreated?(
    store: { readonly dir: string; readonly createdDirectories: readonly string[] },
    env: NodeJS.ProcessEnv,
  ): void;
}

export interface HookInput {
  readonly payload: Payload;
  /** Why stdin was not a usable object ("" when it was). */
  readonly inputProblem: string;
  readonly host: HostProfile;
  readonly env: NodeJS.ProcessEnv;
  /** The payload cwd, else the process cwd. */
  readonly cwd: string;
  /** The host session id when the payload carries a non-empty one. */
  readonly sessionId: string | undefined;
  /** The private state store, opened on first use. */
  state(): StateStore;
  /** `<prefix><kind>`: the state kind name for this host. */
  kind(kind: string): string;
}

export function createHookInput(
  payload: Payload,
  inputProblem: string,
  host: HostProfile,
  env: NodeJS.ProcessEnv,
): HookInput {
  const cwd = payloadCwd(payload);
  let store: StateStore | undefined;
  return {
    payload,
    inputProblem,
    host,
    env,
    cwd,
    sessionId: payloadSessionId(payload, host.sessionIdField),
    state: () => {
      if (store) return store;
      store = openStateStore(host.stateDirectory(env, cwd), host.stateAnchor?.(env, cwd));
      if (store.safe && store.created)
        host.onStateCreated?.({ dir: store.dir, createdDirectories: store.createdDirectories ?? [store.dir] }, env);
      return store;
    },
    kind: (kind: string) => `${host.statePrefix}${kind}`,
  };
}
