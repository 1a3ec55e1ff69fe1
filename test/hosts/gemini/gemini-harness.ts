// Drives the real Gemini CLI (pinned in test/e2e/package.json) offline against mock-gemini.ts,
// with our hooks registered by our own installer (`velesdb-hooks install --client gemini`).
//
// What a headless run needs (measured on @google/gemini-cli 0.61.0):
// - `security.auth.selectedType: "gemini-api-key"` + GEMINI_API_KEY, and GOOGLE_GEMINI_BASE_URL
//   pointing at the mock (a path prefix is kept, so each case has its own /s/<scenario>);
// - `model.name` pinned, else the router first asks a classifier model;
// - the workspace trusted in ~/.gemini/trustedFolders.json (else exit 55, or --yolo downgraded);
// - `privacy.usageStatisticsEnabled: false`, else it reaches for play.googleapis.com (the trap
//   proxy caught it);
// - `--yolo` so write tools run without a prompt; one run takes ≈4–5 s here.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  doubleArgs,
  E2E_PROJECT,
  NODE_CACHE_ENV,
  runInstaller,
  runProcess,
  type DoubleMode,
} from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import type { GeminiRequest, GeminiTurn, MockGemini } from "./mock-gemini.ts";

/** The CLI's entry script (host-bins.ts: VH_E2E_HOSTS, or VH_E2E_GEMINI_BIN for a scratch install). */
export const GEMINI_BIN = HOST_BINS.gemini;

export const GEMINI_MODEL = "gemini-2.5-flash";

/**
 * Gemini starts a second Node with a larger heap and gives it GEMINI_CLI_NO_RELAUNCH=true
 * (bundle/gemini.js `run()`, 0.61.0): the session, and every hook it runs, lives in that child.
 * Set here, the CLI skips the first start: measured 3.2 → 1.7 CPU s for `--version`. What the
 * relaunch adds (--max-old-space-size, an IPC channel for enterprise admin settings) is nothing
 * these tests look at, and the hooks see the same variable either way.
 */
export const GEMINI_NO_RELAUNCH = { GEMINI_CLI_NO_RELAUNCH: "true" } as const;

export type Mode = "hooks" | "none";

export interface GeminiCase {
  readonly name: string;
  readonly scenario: string;
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly workspace: string;
  readonly settings: string;
  readonly mcpLog: string;
  readonly mock: MockGemini;
}

export interface GeminiCaseOptions {
  /** Written as <workspace>/.velesdb-hooks.json. */
  projectConfig?: Record<string, unknown>;
  /** How the velesdb-memory double answers the recall tools (default "structured"). */
  mcpMode?: DoubleMode;
  /** "hooks" mode: runs our installer in place of the single install (a test that installs twice and keeps the bytes). */
  install?: (c: GeminiCase) => void;
}

export interface GeminiRun {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  requests: GeminiRequest[];
  case: GeminiCase;
}

let counter = 0;

/** The user's settings before our installer touches them: what a headless Gemini needs, and the MCP server. */
export function userSettings(c: Pick<GeminiCase, "mcpLog">, mcpMode: DoubleMode = "structured"): string {
  const args = doubleArgs(c.mcpLog, mcpMode);
  const value = {
    security: { auth: { selectedType: "gemini-api-key" } },
    model: { name: GEMINI_MODEL },
    privacy: { usageStatisticsEnabled: false },
    mcpServers: { "velesdb-memory": { command: "node", args } },
  };
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** createGeminiCase(mock, name, mode, turns) → a private case; hooks installed when mode is "hooks". */
export function createGeminiCase(
  mock: MockGemini,
  name: string,
  mode: Mode,
  turns: GeminiTurn[],
  options: GeminiCaseOptions = {},
): GeminiCase {
  const label = `${name}-${mode}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `vh-e2e-${label}-`)));
  const home = path.join(root, "home");
  const c: GeminiCase = {
    name: label,
    scenario: `${label}-${process.pid}-${++counter}`,
    root,
    home,
    tmp: path.join(root, "tmp"),
    workspace: path.join(root, "ws"),
    settings: path.join(home, ".gemini", "settings.json"),
    mcpLog: path.join(root, "mcp.log"),
    mock,
  };
  for (const dir of [path.join(home, ".gemini"), c.tmp, c.workspace])
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    path.join(c.workspace, ".velesdb-hooks.json"),
    `${JSON.stringify(options.projectConfig ?? E2E_PROJECT)}\n`,
  );
  fs.writeFileSync(c.settings, userSettings(c, options.mcpMode));
  fs.writeFileSync(
    path.join(home, ".gemini", "trustedFolders.json"),
    `${JSON.stringify({ [c.workspace]: "TRUST_FOLDER" })}\n`,
  );
  mock.script(c.scenario, turns);
  if (mode === "hooks") (options.install ?? installGeminiHooks)(c);
  return c;
}

/** installer(c, "install") → `velesdb-hooks <command> --client gemini` with the case's HOME; throws on failure. */
export const installer = (c: GeminiCase, command: "install" | "uninstall" | "check"): string =>
  runInstaller(c, "gemini", command);

/** THE one place a Gemini case gets our hooks: our installer, as a user runs it. */
export const installGeminiHooks = (c: GeminiCase): string => installer(c, "install");

/** runGemini(c, prompt) → `gemini -p <prompt> --yolo` from the workspace, against the mock. */
export async function runGemini(c: GeminiCase, prompt: string, timeoutMs = 90_000): Promise<GeminiRun> {
  // PATH without node_modules/.bin or bun's dirs: neither the hooks nor the MCP fake may need bun.
  const pathDirs = (process.env.PATH ?? "/usr/bin:/bin")
    .split(path.delimiter)
    .filter((d) => d && !d.includes("node_modules") && !/bun/i.test(d));
  const proxy = c.mock.proxyUrl;
  const env: Record<string, string> = {
    PATH: pathDirs.join(path.delimiter),
    HOME: c.home,
    TMPDIR: c.tmp,
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    USER: process.env.USER ?? "e2e",
    SHELL: "/bin/sh",
    GEMINI_API_KEY: "dummy",
    GOOGLE_GEMINI_BASE_URL: c.mock.baseUrl(c.scenario),
    // Anything not addressed to 127.0.0.1 goes to the trap proxy and is logged there.
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    // No velesdb-memory daemon to ask at session start.
    VELESDB_HOOK_FRESHNESS: "off",
    ...NODE_CACHE_ENV,
    ...GEMINI_NO_RELAUNCH,
  };
  const result = await runProcess(["node", GEMINI_BIN, "-p", prompt, "--yolo"], env, c.workspace, timeoutMs);
  const requests = c.mock.requests(c.scenario);
  if (process.env.VH_E2E_KEEP) fs.writeFileSync(path.join(c.root, "requests.json"), JSON.stringify(requests, null, 2));
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs,
    requests,
    case: c,
  };
}

export function removeGeminiCase(c: GeminiCase): void {
  if (!process.env.VH_E2E_KEEP) fs.rmSync(c.root, { recursive: true, force: true });
}

// ---- Request anatomy ------------------------------------------------------------------------

/** The `functionResponse` parts the model got back, in order: tool name and its response object. */
export function functionResponses(r: GeminiRun): { name: string; response: Record<string, unknown> }[] {
  const last = r.requests.at(-1);
  const contents: any[] = Array.isArray(last?.body?.contents) ? last.body.contents : [];
  return contents
    .flatMap((c) => (Array.isArray(c?.parts) ? c.parts : []))
    .flatMap((p: any) =>
      p?.functionResponse ? [{ name: p.functionResponse.name, response: p.functionResponse.response ?? {} }] : [],
    );
}

/** The texts of the role:"user" entries of a request. */
export function userTexts(req: GeminiRequest | undefined): string[] {
  const contents: any[] = Array.isArray(req?.body?.contents) ? req.body.contents : [];
  return contents
    .filter((c) => c?.role === "user")
    .map((c) =>
      Array.isArray(c.parts) ? c.parts.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join("\n") : "",
    );
}
