// GitHub Copilot CLI: a hooks file of our own, <COPILOT_HOME or ~/.copilot>/hooks/
// velesdb-hooks.json, `{"version": 1, "hooks": {…}}` with a flat handler list per camelCase
// event. Copilot loads every *.json of that directory in every mode (`-p` included, no trust
// step), so our entries never share bytes with the user's settings.json, which Copilot itself
// rewrites; uninstall removes the file once only the version field is left.
//
// Copilot runs `bash` through bash and `powershell` through PowerShell on Windows, so the path
// is quoted for each. A preToolUse hook that cannot run denies the tool ("hook errored"), so
// the matchers (honoured on flat handlers, anchored by us) keep a missing binary from
// refusing more than the edit tools, and check/doctor say so loudly. `timeoutSec` is in
// seconds; a hook that times out lets the tool run.
import * as fs from "node:fs";
import * as path from "node:path";
import { COPILOT } from "../../hosts/copilot.ts";
import { absoluteOverride, shown } from "../paths.ts";
import { installCommand } from "../check/report.ts";
import { posixQuote, powershellQuote } from "../entries/shell-words.ts";
import { fileInHome, rowsOf, type InstallerClient, type RegistryClient } from "../client.ts";

// Events, matchers and timeouts: the descriptor (src/hosts/descriptors/copilot.ts).
const ROWS = rowsOf(COPILOT);

const home: InstallerClient["home"] = (ctx) => absoluteOverride(ctx, "COPILOT_HOME", path.join(ctx.home, ".copilot"));

export const copilot: RegistryClient = {
  name: COPILOT.name,
  descriptor: COPILOT,
  home,
  registry: {
    path: fileInHome(home, "hooks", "velesdb-hooks.json"),
    layout: "flat",
    rows: ROWS,
    handler(row, binaryPath) {
      const words = `copilot ${row.argvEvent}`;
      return {
        type: "command",
        ...(row.matcher === undefined ? {} : { matcher: row.matcher }),
        bash: `${posixQuote(binaryPath)} ${words}`,
        powershell: `& ${powershellQuote(binaryPath)} ${words}`,
        timeoutSec: row.timeout,
      };
    },
    commandFields: ["bash", "powershell"],
    skeleton: { version: 1 },
  },
  // ~/.copilot/mcp-config.json (`$COPILOT_HOME`), the file `copilot mcp list` reads; `tools`
  // says which of the server's tools Copilot offers (["*"]: all).
  mcp: {
    files: [
      {
        label: "mcp-config.json",
        scope: "user",
        path: fileInHome(home, "mcp-config.json"),
        format: "json",
        servers: () => ["mcpServers"],
      },
    ],
    stdio: (command, args) => ({ type: "local", command, args: [...args], tools: ["*"] }),
    url: (url) => ({ type: "http", url, tools: ["*"] }),
  },
  report(ctx, facts) {
    if (facts.owned.length === 0 || fs.existsSync(facts.stable))
      return { lines: [], drifted: false, repairs: [], doctor: [] };
    const line = `copilot: the entries run ${shown(ctx, facts.stable)}, which does not exist: Copilot refuses every edit tool while it is missing`;
    return { lines: [line], drifted: true, repairs: [installCommand(ctx, copilot)], doctor: [] };
  },
};
