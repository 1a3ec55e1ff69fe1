// "velesdb-memory is not answering" as the guard may believe it (docs/contract.md §6.1,
// docs/shared-memory.md#a-dead-server-in-an-opted-in-repository). Two sources, both about this user's memory, never
// about one recall's content:
// - the broker's status file (src/core/mcp-runtime.ts readMcpStatus): "failed" is what the last
//   start of the store's server ended with, and it stays until a start succeeds;
// - a recall of this session whose tool result is a transport failure, as the host hands it
//   over to PostToolUse: the front's own errors ("velesdb-memory stopped: …", "velesdb-memory
//   is not running: …", src/mcp/front.ts and broker.ts), and the hosts' words, measured when the
//   server died under them — Claude's `CONNECTION_CLOSED` / "Connection closed", Codex's
//   `unsupported call`.
// A recall that answered with an error of the server's own (a bad filter) is no such proof.
import { readMcpStatus } from "./mcp-runtime.ts";
import type { HookInput } from "./hook-input.ts";
import { markerPath, readPrivateFile, repositoryIdentity, writePrivateFile, type StateStore } from "./state.ts";

/** The session's marker: its content is the cause line. */
export const MEMORY_DOWN = "memory-down";
/** Per (session, repository): the model was told once that edits pass while the server is down. */
export const MEMORY_DOWN_TOLD = "memory-down-told";

const TRANSPORT_FAILURE =
  /velesdb-memory stopped: |velesdb-memory is not running: |CONNECTION_CLOSED|Connection closed|unsupported call/;
const MAX_SCANNED = 64 * 1024;

/** transportFailureOf(tool_response) → the line that shows a transport failure, or undefined. Bounded, never throws. */
export function transportFailureOf(response: unknown): string | undefined {
  let budget = MAX_SCANNED;
  const scan = (value: unknown, depth: number): string | undefined => {
    if (budget <= 0 || depth > 6) return undefined;
    if (typeof value === "string") {
      const text = value.slice(0, budget);
      budget -= text.length;
      const match = TRANSPORT_FAILURE.exec(text);
      if (!match) return undefined;
      const lineStart = text.lastIndexOf("\n", match.index) + 1;
      const lineEnd = text.indexOf("\n", match.index);
      return text
        .slice(lineStart, lineEnd < 0 ? undefined : lineEnd)
        .trim()
        .slice(0, 300);
    }
    if (typeof value !== "object" || value === null) return undefined;
    for (const item of Array.isArray(value) ? value : Object.values(value)) {
      const found = scan(item, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  try {
    return scan(response, 0);
  } catch {
    return undefined;
  }
}

/** recordMemoryDown(input, store, sessionId, cause) → "" or why it could not be written (a stderr note). */
export function recordMemoryDown(
  input: HookInput,
  store: StateStore & { safe: true },
  sessionId: string,
  cause: string,
): string {
  const written = writePrivateFile(markerPath(store, input.kind(MEMORY_DOWN), sessionId), `${cause}\n`);
  return written.ok ? "" : `memory-down not recorded: ${written.cause}: ${written.problem}`;
}

/**
 * memoryDownCause(input, store, sessionId) → why velesdb-memory is known not to answer this
 * session, or undefined. The broker's "running" outranks an old transport failure of the
 * session: the server is back, and a recall can succeed again.
 */
export function memoryDownCause(
  input: HookInput,
  store: StateStore & { safe: true },
  sessionId: string,
): string | undefined {
  const status = readMcpStatus(input.env, input.cwd);
  if (status.state === "failed") return status.cause;
  if (status.state === "running") return undefined;
  const marker = readPrivateFile(markerPath(store, input.kind(MEMORY_DOWN), sessionId), 4096);
  return marker.state === "present"
    ? marker.content.trim().split("\n")[0]!.slice(0, 300) || "a recall failed in transport"
    : undefined;
}

/** toldOnce(input, store, sessionId, root) → whether this session was already told, marking it told when not. */
export function toldOnce(
  input: HookInput,
  store: StateStore & { safe: true },
  sessionId: string,
  root: string,
): boolean {
  const marker = markerPath(store, input.kind(MEMORY_DOWN_TOLD), repositoryIdentity(sessionId, root));
  if (readPrivateFile(marker, 64).state === "present") return true;
  writePrivateFile(marker, "1\n");
  return false;
}
