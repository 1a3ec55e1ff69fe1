// Qwen Code: ~/.qwen/settings.json ($QWEN_HOME honoured), grouped Claude-shaped handlers.
// Measured on @qwen-code/qwen-code 0.24.4:
// - `command` runs through bash (`bash -c`), or PowerShell (`powershell -Command`) when the
//   handler says `"shell": "powershell"`; there is no exec form, so the path is quoted for the
//   shell that runs it.
// - `timeout` is read in seconds below 1000 and in milliseconds from 1000 on (older builds read
//   every value in milliseconds, where Claude's 10 would kill each hook after 10 ms). So we
//   register milliseconds ≥ 1000: 10000 is 10 s under both readings. New builds only log a
//   debug-level note about the millisecond form. Measured on a hook that takes 2 s: timeout 1
//   kills it (1 s), 1500 kills it too (1.5 s), 10000 lets it answer.
// - A settings file without `"$version"` is rewritten by Qwen on its first run (2-space indent,
//   `"$version": 4` appended, our entries kept), so a file we create starts with that version,
//   and "installed" is judged on parsed entries, never on bytes.
// - Matchers starting with `^` or `(` are plain regexes; MCP tools are `mcp__<server>__<tool>`.
//   A failed MCP call fires PostToolUseFailure (not registered): only successes count.
import * as path from "node:path";
import { absoluteOverride } from "../paths.ts";
import { posixQuote, powershellQuote } from "../entries/shell-words.ts";
import { QWEN } from "../../hosts/qwen.ts";
import { fileInHome, rowsOf, type InstallerClient, type RegistryClient } from "../client.ts";

// Events, matchers and timeouts (seconds; written as milliseconds below): the descriptor
// (src/hosts/descriptors/qwen.ts).
const ROWS = rowsOf(QWEN);

/** Seconds → the millisecond form both old and new Qwen builds read the same way. */
const qwenTimeout = (seconds: number | undefined): number => Math.max(1000, (seconds ?? 10) * 1000);

const home: InstallerClient["home"] = (ctx) => absoluteOverride(ctx, "QWEN_HOME", path.join(ctx.home, ".qwen"));

export const qwen: RegistryClient = {
  name: QWEN.name,
  descriptor: QWEN,
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler(row, binaryPath, platform) {
      if (platform === "win32") {
        return {
          type: "command",
          command: `& ${powershellQuote(binaryPath)} qwen ${row.argvEvent}`,
          shell: "powershell",
          timeout: qwenTimeout(row.timeout),
        };
      }
      return {
        type: "command",
        command: `${posixQuote(binaryPath)} qwen ${row.argvEvent}`,
        timeout: qwenTimeout(row.timeout),
      };
    },
    skeleton: { $version: 4 },
  },
  // settings.json `mcpServers`, Gemini's shapes (Qwen Code is a fork of Gemini CLI).
  mcp: {
    files: [
      {
        label: "settings.json",
        scope: "user",
        path: fileInHome(home, "settings.json"),
        format: "json",
        servers: () => ["mcpServers"],
      },
    ],
    stdio: (command, args) => ({ command, args: [...args] }),
    url: (url) => ({ httpUrl: url }),
  },
};
