// What check and doctor say about each configured velesdb-memory server once it has been
// started (server-probe.ts): one line per entry, "answers" with the server's version, or "does
// not answer" with the cause. All probes run at once, one per distinct server (two clients
// with the same entry share one start: a second start of the same store would only meet the
// first one's lock), so the whole report waits one bound at most.
import type { InstallerContext } from "../paths.ts";
import type { ServerTarget } from "./mcp-check.ts";
import type { Embedder, ProbeResult } from "./server-conversation.ts";
import { probeServer, specKey } from "./server-probe.ts";

/** VELESDB_HOOKS_SERVER_PROBE=off: check and doctor read the entries but start nothing. */
export const probeIsOff = (env: NodeJS.ProcessEnv): boolean =>
  (env.VELESDB_HOOKS_SERVER_PROBE ?? "").toLowerCase() === "off";

/** probeAll(ctx, targets) → each target's result, in the same shape; every distinct server started once, concurrently. */
export async function probeAll(
  ctx: InstallerContext,
  targets: readonly (readonly ServerTarget[])[],
): Promise<ProbeResult[][]> {
  const started = new Map<string, Promise<ProbeResult>>();
  for (const target of targets.flat()) {
    const key = specKey(target.spec);
    if (!started.has(key)) started.set(key, probeServer(target.spec, ctx.env));
  }
  const results = new Map<string, ProbeResult>();
  await Promise.all([...started].map(async ([key, probe]) => results.set(key, await probe)));
  return targets.map((list) => list.map((target) => results.get(specKey(target.spec))!));
}

export interface ServerLines {
  readonly lines: string[];
  readonly drifted: boolean;
  readonly repairs: string[];
}

/**
 * serverLines("claude", targets, results, "doctor") → one line per server: what answered
 * (doctor adds the embedder), or why nothing did. A server that does not answer is drift:
 * the session gets no velesdb-memory tools, and an opted-in repository refuses every edit.
 */
export function serverLines(
  name: string,
  targets: readonly ServerTarget[],
  results: readonly ProbeResult[],
  mode: "check" | "doctor",
): ServerLines {
  const lines: string[] = [];
  const repairs: string[] = [];
  let drifted = false;
  targets.forEach((target, i) => {
    const result = results[i]!;
    if (!result.ok) {
      drifted = true;
      lines.push(`${name}: MCP server in ${target.where} does not answer: ${result.cause}`);
      repairs.push(
        `make the velesdb-memory server of ${name} start (the cause is on its line above), then velesdb-hooks check`,
      );
      return;
    }
    const lacking = result.missing.length > 0 ? `; it lacks ${result.missing.join(", ")}, which the hooks ask for` : "";
    const embedder =
      mode === "doctor" && result.embedder
        ? `, embedder ${result.embedder.model}${result.embedder.semantic ? " (semantic)" : ""}`
        : "";
    lines.push(
      `${name}: MCP server in ${target.where} answers: ${result.version}, ${result.tools} tools${embedder}${lacking}`,
    );
    if (lacking) {
      drifted = true;
      repairs.push(`point the velesdb-memory server of ${name} at velesdb-memory itself`);
    }
  });
  return { lines, drifted, repairs };
}

/**
 * embedderNote(results) → doctor's one line about the `hash` embedder when any server runs it:
 * velesdb-memory 0.17.0's default (src/embedder.rs:167-175) matches surface form, not meaning.
 */
export function embedderNote(results: readonly ProbeResult[]): string | undefined {
  const hashed = results.some(
    (r): r is Extract<ProbeResult, { ok: true }> & { embedder: Embedder } =>
      r.ok && r.embedder !== undefined && !r.embedder.semantic,
  );
  if (!hashed) return undefined;
  return "a server runs a non-semantic embedder (velesdb-memory's default `hash`): recall matches the words of a query, not its meaning; VELESDB_MEMORY_EMBEDDER=ollama or openai in the server's env gives semantic recall";
}
