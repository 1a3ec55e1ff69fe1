// Where the e2e suites find each real host: the ONE place that knows the layout of a
// node_modules folder holding them. By default that is test/e2e/node_modules (the pins of
// test/e2e/package.json); `npm run e2e:latest` installs the newest published hosts into a
// temporary prefix and points VH_E2E_HOSTS at its node_modules, so the same suites run
// against them without touching the lockfile.
//
// VH_E2E_GEMINI_BIN and VH_E2E_QWEN_PREFIX (one host from a scratch install) still win for
// their host, as they did before this module existed.
import * as fs from "node:fs";
import * as path from "node:path";

const E2E_DIR = import.meta.dir;

/** The node_modules folder the hosts are taken from. */
export const HOSTS_NODE_MODULES = path.resolve(process.env.VH_E2E_HOSTS || path.join(E2E_DIR, "node_modules"));

const qwenModules = process.env.VH_E2E_QWEN_PREFIX
  ? path.join(path.resolve(process.env.VH_E2E_QWEN_PREFIX), "node_modules")
  : HOSTS_NODE_MODULES;

/** inHosts(...parts) → <hosts node_modules>/<parts>. */
const inHosts = (...parts: string[]): string => path.join(HOSTS_NODE_MODULES, ...parts);

/** Each host's entry point, as the harnesses start it. */
export const HOST_BINS = {
  /** Native executable (npm's bin link to bin/claude.exe). */
  claude: inHosts(".bin", "claude"),
  /** Node launcher script (run as `node <it>`). */
  codex: inHosts(".bin", "codex"),
  /** Node launcher script that unpacks and starts the platform binary. */
  copilot: inHosts(".bin", "copilot"),
  gemini: process.env.VH_E2E_GEMINI_BIN || inHosts("@google", "gemini-cli", "bundle", "gemini.js"),
  qwenCli: path.join(qwenModules, "@qwen-code", "qwen-code", "cli.js"),
  /** The `node` package's binary: Qwen Code needs a newer Node than the one the rest may run on. */
  qwenNode: path.join(qwenModules, "node", "bin", "node"),
  /** opencode-ai's native binary for this platform (its launcher only finds and runs it). */
  opencode: inHosts("opencode-linux-x64", "bin", "opencode"),
  /** Factory Droid's platform package, run directly (the @factory/cli loader wants an unpublished platform version). */
  droid: inHosts("@factory", "cli-linux-x64", "bin", "droid"),
  /** Kilo Code's platform package, run directly (@kilocode/cli 7.8.1 pins platform packages this registry lacks). */
  kilo: inHosts("@kilocode", "cli-linux-x64", "bin", "kilo"),
  /** CodeBuddy Code's Node launcher (run as `node <it>`), shipped inside @tencent-ai/agent-sdk under cli/ (its own package is not on the registry). */
  codebuddy: inHosts("@tencent-ai", "agent-sdk", "cli", "bin", "codebuddy"),
  /**
   * Pi's entry (run as `node <it>` with qwenNode: the current line needs Node >= 22.19). The pin
   * is @mariozechner/pi-coding-agent; `e2e:latest` installs its renamed successor
   * @earendil-works/pi-coding-agent, taken when present.
   */
  piCli: fs.existsSync(inHosts("@earendil-works", "pi-coding-agent", "dist", "cli.js"))
    ? inHosts("@earendil-works", "pi-coding-agent", "dist", "cli.js")
    : inHosts("@mariozechner", "pi-coding-agent", "dist", "cli.js"),
  /** The MCP extension Pi loads (listed in ~/.pi/agent/settings.json `extensions`). */
  piMcpAdapter: inHosts("pi-mcp-adapter", "index.ts"),
} as const;

/**
 * The DeepSeek harness's Codex-hook bridge module (imported into the test process, not
 * spawned), resolved the way Node would from a file sitting next to the hosts' node_modules.
 */
export function dshBridgeEntry(): string {
  return Bun.resolveSync("@deepseek-ai/dsh-hooks-codex", path.dirname(HOSTS_NODE_MODULES));
}
