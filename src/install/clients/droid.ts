// Factory Droid: grouped Claude-shaped handlers under "hooks" in ~/.factory/settings.json, the
// file that also holds the user's BYOK `customModels` (JSONC; measured: Droid 0.225.2 did not
// rewrite it). `timeout` is in seconds. Droid runs `command` through a shell, so the path is
// POSIX-quoted (Windows: not measured; double-quoted, one word for cmd.exe and POSIX shells).
// MCP tools are `<server>___<tool>`. The matchers are regexes, as Claude's.
//
// MCP servers (measured with `droid mcp add` / `droid mcp list`, 0.225.2): `mcpServers` in
// ~/.factory/mcp.json (listed as [user]) and in the project's .factory/mcp.json ([project]);
// install writes the user file, in the shapes `droid mcp add` writes.
import * as path from "node:path";
import { posixQuote } from "../entries/shell-words.ts";
import { DROID } from "../../hosts/droid.ts";
import { fileInHome, rowsOf, type InstallerClient, type McpFile, type RegistryClient } from "../client.ts";

// Events, matchers and timeouts: the descriptor (src/hosts/descriptors/droid.ts).
const ROWS = rowsOf(DROID);

const home: InstallerClient["home"] = (ctx) => ({ ok: true, path: path.join(ctx.home, ".factory") });

const projectMcp: McpFile["path"] = (ctx) => ({ ok: true, path: path.join(ctx.cwd, ".factory", "mcp.json") });

export const droid: RegistryClient = {
  name: DROID.name,
  descriptor: DROID,
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler(row, binaryPath, platform) {
      const program = platform === "win32" ? `"${binaryPath}"` : posixQuote(binaryPath);
      return { type: "command", command: `${program} droid ${row.argvEvent}`, timeout: row.timeout };
    },
  },
  mcp: {
    files: [
      {
        label: "mcp.json",
        scope: "user",
        path: fileInHome(home, "mcp.json"),
        format: "json",
        servers: () => ["mcpServers"],
      },
      {
        label: "the project's .factory/mcp.json",
        scope: "project",
        path: projectMcp,
        format: "json",
        servers: () => ["mcpServers"],
      },
    ],
    stdio: (command, args) => ({ type: "stdio", command, args: [...args], disabled: false }),
    url: (url) => ({ type: "http", url, disabled: false }),
  },
};
