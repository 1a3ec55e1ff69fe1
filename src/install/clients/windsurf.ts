// Windsurf Cascade (docs/contract.md §4.3): ~/.codeium/windsurf/hooks.json, `{"command": …, "show_output":
// false}` in a flat list per event, plus a section of the global rules file — the only channel
// that reaches Cascade's model in every session (hook stdout reaches neither the model nor the
// user). Cascade runs `command` through a shell, so the path is POSIX-quoted. On Windows the
// shell Cascade uses was not measured; the path is double-quoted there, which cmd.exe and
// POSIX shells both read as one word (PowerShell would need `& "…"`). show_output stays false:
// the hooks' stdout is for parity only and the guard's refusal reaches the agent through exit 2.
import * as path from "node:path";
import { windsurfRulesGuidance, windsurfRulesMarkerNote } from "../../core/texts.ts";
import { posixQuote } from "../entries/shell-words.ts";
import { WINDSURF } from "../../hosts/windsurf.ts";
import { rowsOf, type RegistryClient } from "../client.ts";

// No matchers and no timeout field (src/hosts/descriptors/windsurf.ts); the hooks themselves filter.
const ROWS = rowsOf(WINDSURF);

const dir = (home: string): string => path.join(home, ".codeium", "windsurf");

export const windsurf: RegistryClient = {
  name: WINDSURF.name,
  descriptor: WINDSURF,
  home: (ctx) => ({ ok: true, path: dir(ctx.home) }),
  registry: {
    path: (ctx) => ({ ok: true, path: path.join(dir(ctx.home), "hooks.json") }),
    layout: "flat",
    rows: ROWS,
    handler(row, binaryPath, platform) {
      const program = platform === "win32" ? `"${binaryPath}"` : posixQuote(binaryPath);
      return { command: `${program} windsurf ${row.argvEvent}`, show_output: false };
    },
  },
  // ~/.codeium/windsurf/mcp_config.json, as upstream's install-memory-daemon.sh wires it
  // (`serverUrl` for HTTP). Not measured: Windsurf does not run here.
  mcp: {
    files: [
      {
        label: "mcp_config.json",
        scope: "user",
        path: (ctx) => ({ ok: true, path: path.join(dir(ctx.home), "mcp_config.json") }),
        format: "json",
        servers: () => ["mcpServers"],
      },
    ],
    stdio: (command, args) => ({ command, args: [...args] }),
    url: (url) => ({ serverUrl: url }),
  },
  // ~/.codeium/windsurf/memories/global_rules.md, the rules file Cascade reads in every workspace.
  sections: [
    {
      label: "rules section",
      path: (ctx) => path.join(dir(ctx.home), "memories", "global_rules.md"),
      body: windsurfRulesGuidance,
      markerNote: windsurfRulesMarkerNote,
    },
  ],
};
