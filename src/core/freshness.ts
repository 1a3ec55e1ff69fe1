// The freshness line of SessionStart (docs/contract.md §5.1), also shown by doctor: when a velesdb-memory
// daemon answers on this machine with a version older than the latest published one, one line
// says so. It is a courtesy, so it must never cost a session start more than its two
// timeouts (1 s for the daemon, 2 s for the registry, the registry asked at most once a day)
// and every failure — no daemon, a refused TLS handshake, a registry that is down, a cache we
// cannot write — is silence.
//
// Environment:
//   VELESDB_HOOK_FRESHNESS=off           disables the check entirely.
//   VELESDB_MCP_URL                      the daemon's MCP endpoint (default https://127.0.0.1:18090/mcp).
//                                        A self-signed certificate is accepted on a loopback host only.
//   VELESDB_HOOKS_LATEST_VERSION_URL     where the latest published version is read (default: the
//                                        crates.io API for velesdb-memory); the answer may be the
//                                        crates.io shape `{crate:{max_stable_version}}` or `{version}`.
// The answer is cached in ~/.velesdb-memory/.latest-version for 24 h (a failed lookup is cached
// too, as an empty line, so an offline machine does not pay the 2 s on every session start).
import * as fs from "node:fs";
import * as path from "node:path";
import { VERSION } from "../version.ts";
import { homeDirectory } from "./home.ts";
import { readPrivateFile, writePrivateFile } from "./state.ts";
import { staleDaemonLine } from "./texts.ts";

export const DEFAULT_MCP_URL = "https://127.0.0.1:18090/mcp";
export const DEFAULT_LATEST_VERSION_URL = "https://crates.io/api/v1/crates/velesdb-memory";
export const DAEMON_TIMEOUT_MS = 1000;
export const REGISTRY_TIMEOUT_MS = 2000;
export const CACHE_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Versions end up in model-visible text: only a plain semantic version is accepted. */
const VERSION_PATTERN = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]{1,40}))?(?:\+[0-9A-Za-z.-]{1,40})?$/;

export interface FreshnessReport {
  readonly url: string;
  /** The daemon's version, or undefined when nothing (valid) answered. */
  readonly running: string | undefined;
  /** The latest published version, when known (only looked up when a daemon answered). */
  readonly latest: string | undefined;
  /** The line SessionStart appends, or "". */
  readonly line: string;
}

/** freshnessNotice(env) → the one line to append to SessionStart's context, or "". Never throws. */
export async function freshnessNotice(env: NodeJS.ProcessEnv = process.env, now: number = Date.now()): Promise<string> {
  if ((env.VELESDB_HOOK_FRESHNESS ?? "").toLowerCase() === "off") return "";
  try {
    return (await freshnessReport(env, now)).line;
  } catch {
    return "";
  }
}

/** freshnessReport(env) → what the daemon and the registry said, and the resulting line. */
export async function freshnessReport(
  env: NodeJS.ProcessEnv = process.env,
  now: number = Date.now(),
): Promise<FreshnessReport> {
  const url = env.VELESDB_MCP_URL || DEFAULT_MCP_URL;
  const running = await daemonVersion(url, DAEMON_TIMEOUT_MS);
  if (running === undefined) return { url, running, latest: undefined, line: "" };
  const latest = await latestPublishedVersion(env, now);
  const line = latest !== undefined && compareVersions(running, latest) < 0 ? staleDaemonLine(running, latest) : "";
  return { url, running, latest, line };
}

/**
 * daemonVersion(url, ms) → serverInfo.version from an MCP `initialize` POST, or undefined.
 * The daemon speaks Streamable HTTP: the answer is JSON or an SSE stream of JSON messages.
 */
export async function daemonVersion(url: string, timeoutMs: number): Promise<string | undefined> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  if (target.protocol !== "https:" && target.protocol !== "http:") return undefined;
  const started = Date.now();
  // Most machines run no daemon. A bare TCP connect says so in ~0.5 ms, where setting up
  // fetch costs ~3.5 ms of every session start (measured on the compiled binary).
  if (!(await portAcceptsConnections(target, timeoutMs))) return undefined;
  const signal = AbortSignal.timeout(Math.max(1, timeoutMs - (Date.now() - started)));
  try {
    const response = await fetch(target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "user-agent": userAgent(),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "velesdb-hooks", version: VERSION },
        },
      }),
      redirect: "manual",
      signal,
      // The daemon's certificate is self-signed; that is only acceptable for this machine.
      tls: { rejectUnauthorized: !isLoopback(target.hostname) },
    });
    if (!response.ok || !response.body) return undefined;
    const session = response.headers.get("mcp-session-id");
    if (session) closeSession(target, session);
    // An SSE answer may keep its stream open after the message: stop reading at the first version.
    return await readAnswerUntil(response.body, MAX_ANSWER_BYTES, versionFromMcpBody);
  } catch {
    return undefined;
  }
}

/** portAcceptsConnections(url, ms) → true when something accepts a TCP connection at the URL's host and port. */
export function portAcceptsConnections(target: URL, timeoutMs: number): Promise<boolean> {
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
  return new Promise((resolve) => {
    let settled = false;
    const settle = (accepted: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(accepted);
    };
    const timer = setTimeout(() => settle(false), timeoutMs);
    Bun.connect({
      hostname,
      port,
      socket: {
        open(socket) {
          socket.end();
          settle(true);
        },
        connectError: () => settle(false),
        error: () => settle(false),
        data: () => undefined,
      },
    }).catch(() => settle(false));
  });
}

/** versionFromMcpBody(body) → serverInfo.version from a JSON answer or from the SSE `data:` lines. */
export function versionFromMcpBody(body: string): string | undefined {
  for (const message of mcpMessages(body) as { result?: { serverInfo?: { version?: unknown } } }[]) {
    const version = validVersion(message?.result?.serverInfo?.version);
    if (version) return version;
  }
  return undefined;
}

/** mcpMessages(body) → the JSON values of a Streamable HTTP answer: the body itself, or each SSE `data:` line. */
export function mcpMessages(body: string): unknown[] {
  const candidates = body.trimStart().startsWith("{")
    ? [body]
    : body
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim());
  return candidates.flatMap((candidate) => {
    try {
      return [JSON.parse(candidate) as unknown];
    } catch {
      return []; // Not JSON: keep looking.
    }
  });
}

/**
 * readAnswerUntil(stream, max, pick) → pick's first answer over the text read so far, read
 * until it has one, the stream ends or max characters came: an SSE answer may keep its stream
 * open after the message it carries.
 */
export async function readAnswerUntil<T>(
  stream: ReadableStream<Uint8Array>,
  maxChars: number,
  pick: (body: string) => T | undefined,
): Promise<T | undefined> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let body = "";
  try {
    while (body.length <= maxChars) {
      const chunk = await reader.read();
      if (chunk.done) return pick(body + decoder.decode());
      body += decoder.decode(chunk.value, { stream: true });
      const found = pick(body);
      if (found !== undefined) return found;
    }
    return undefined;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** latestPublishedVersion(env, now) → from the 24 h cache, else from the registry (2 s); undefined when unknown. */
export async function latestPublishedVersion(
  env: NodeJS.ProcessEnv,
  now: number = Date.now(),
): Promise<string | undefined> {
  const cache = latestVersionCachePath(env);
  const cached = readCache(cache, now);
  if (cached.fresh) return cached.version;
  const looked = await lookUpLatest(
    env.VELESDB_HOOKS_LATEST_VERSION_URL || DEFAULT_LATEST_VERSION_URL,
    REGISTRY_TIMEOUT_MS,
  );
  // A failed lookup keeps the last known answer and is not retried for a day.
  const remembered = looked ?? cached.version;
  writeCache(cache, remembered ?? "");
  return remembered;
}

/** ~/.velesdb-memory/.latest-version, beside velesdb-memory's own files. */
export function latestVersionCachePath(env: NodeJS.ProcessEnv): string {
  return path.join(homeDirectory(env), ".velesdb-memory", ".latest-version");
}

function readCache(file: string, now: number): { fresh: boolean; version: string | undefined } {
  const read = readPrivateFile(file, 256);
  if (read.state !== "present") return { fresh: false, version: undefined };
  const version = validVersion(read.content.trim());
  let fresh = false;
  try {
    // Whole milliseconds on both sides: Date.now() is cut to the millisecond and mtime is not, so a
    // cache written within the current millisecond read as written in the future, and stale
    // (seen: test/freshness.test.ts asked the registry twice on a loaded machine).
    const age = now - Math.floor(fs.lstatSync(file).mtimeMs);
    fresh = age >= 0 && age < CACHE_TTL_MS;
  } catch {
    // Vanished between the two calls: treat as stale.
  }
  return { fresh, version };
}

function writeCache(file: string, version: string): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writePrivateFile(file, `${version}\n`);
  } catch {
    // A read-only home (sandboxed hooks) only means we ask again next time.
  }
}

async function lookUpLatest(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json", "user-agent": userAgent() },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    const answer = JSON.parse(await boundedText(response, MAX_ANSWER_BYTES)) as {
      crate?: { max_stable_version?: unknown; max_version?: unknown };
      version?: unknown;
    };
    return (
      validVersion(answer?.crate?.max_stable_version) ??
      validVersion(answer?.crate?.max_version) ??
      validVersion(answer?.version)
    );
  } catch {
    return undefined;
  }
}

/**
 * compareVersions("1.0.0-rc.10", "1.0.0-rc.9") → positive: full semver precedence, numeric
 * pre-release identifiers compared as numbers (a string compare put rc.10 before rc.9:
 * test/freshness.test.ts). Bun.semver is built in, so this costs no start-up; it throws on text
 * that is not a version, which the pattern rules out first (0: "cannot tell" never claims an
 * upgrade).
 */
export function compareVersions(a: string, b: string): number {
  if (!VERSION_PATTERN.test(a) || !VERSION_PATTERN.test(b)) return 0;
  return Bun.semver.order(a, b);
}

function validVersion(value: unknown): string | undefined {
  return typeof value === "string" && VERSION_PATTERN.test(value) ? value.replace(/^v/, "") : undefined;
}

/** isLoopback("127.0.0.1") → true: a host of this machine, where a self-signed certificate is acceptable. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Ends the MCP session we opened, without waiting for it: the daemon should not keep it. */
function closeSession(target: URL, session: string): void {
  fetch(target, {
    method: "DELETE",
    headers: { "mcp-session-id": session, "user-agent": userAgent() },
    signal: AbortSignal.timeout(DAEMON_TIMEOUT_MS),
    tls: { rejectUnauthorized: !isLoopback(target.hostname) },
  }).catch(() => undefined);
}

async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new Error("answer too large");
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > maxBytes) throw new Error("answer too large");
  return new TextDecoder().decode(bytes);
}

const userAgent = (): string => `velesdb-hooks/${VERSION}`;
