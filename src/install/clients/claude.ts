// Claude Code (docs/contract.md §4.1): ~/.claude/settings.json ($CLAUDE_CONFIG_DIR honoured), grouped
// handlers in the exec form — no shell, so no quoting, and it works on Windows.
import * as path from "node:path";
import { CLAUDE } from "../../hosts/claude.ts";
import { absoluteOverride } from "../paths.ts";
import { fileInHome, rowsOf, type InstallerClient, type McpFile, type RegistryClient } from "../client.ts";

// Events, matchers and timeouts: the descriptor (src/hosts/descriptors/claude.ts).
const ROWS = rowsOf(CLAUDE);

const home: InstallerClient["home"] = (ctx) =>
  absoluteOverride(ctx, "CLAUDE_CONFIG_DIR", path.join(ctx.home, ".claude"));

// MCP servers (measured on 2.1.328 with `claude mcp add`): user scope in ~/.claude.json
// `mcpServers` — `$CLAUDE_CONFIG_DIR/.claude.json` when that is set —, local scope in the same
// file under `projects.<cwd>.mcpServers`, project scope in the cwd's `.mcp.json` (listed as
// "Pending approval" until the user approves it in a session). ~/.claude.json is Claude
// Code's own state file, rewritten while it runs: the pipeline writes it only when its bytes
// are still those it planned from (user-file-write.ts, writeUserFile).
const claudeJson: McpFile["path"] = (ctx) => {
  const dir = absoluteOverride(ctx, "CLAUDE_CONFIG_DIR", ctx.home);
  return dir.ok ? { ok: true, path: path.join(dir.path, ".claude.json") } : dir;
};

export const claude: RegistryClient = {
  name: CLAUDE.name,
  descriptor: CLAUDE,
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler: (row, binaryPath) => ({
      type: "command",
      command: binaryPath,
      args: ["claude", row.argvEvent],
      timeout: row.timeout,
    }),
  },
  mcp: {
    files: [
      { label: "user scope", scope: "user", path: claudeJson, format: "json", servers: () => ["mcpServers"] },
      // Keyed by the cwd, but in the user's own file: only `claude mcp add` writes it.
      {
        label: "local scope",
        scope: "user",
        path: claudeJson,
        format: "json",
        servers: (ctx) => ["projects", ctx.cwd, "mcpServers"],
      },
      {
        label: "the project's .mcp.json",
        scope: "project",
        path: (ctx) => ({ ok: true, path: path.join(ctx.cwd, ".mcp.json") }),
        format: "json",
        servers: () => ["mcpServers"],
        needsApproval: true,
      },
    ],
    // The shapes `claude mcp add` writes.
    stdio: (command, args) => ({ type: "stdio", command, args: [...args], env: {} }),
    url: (url) => ({ type: "http", url }),
  },
};
