// Claude Code (docs/contract.md §4.1): ~/.claude/settings.json ($CLAUDE_CONFIG_DIR honoured), grouped
// handlers in the exec form — no shell, so no quoting, and it works on Windows.
import * as path from "node:path";
import { POST_TOOL_USE_TIMEOUT_S } from "../../core/host-timeouts.ts";
import { absoluteOverride } from "../paths.ts";
import { fileInHome, type InstallerClient, type McpFile, type RegistryClient, type Registration } from "./client.ts";

// PostToolUse compiles large Bash output, hence 30 s (compression keeps its deadline inside it:
// src/core/host-timeouts.ts); everything else is local and fast.
const EDIT_TOOLS = "^(Edit|Write|NotebookEdit)$";
const POST_TOOLS = "^(Bash|mcp__(plugin_[^_]+_)?velesdb[-_]memory__.+)$";

const ROWS: readonly Registration[] = [
  { wireEvent: "SessionStart", argvEvent: "session-start", timeout: 10 },
  { wireEvent: "Stop", argvEvent: "stop", timeout: 10 },
  { wireEvent: "PreCompact", argvEvent: "pre-compact", timeout: 10 },
  { wireEvent: "PreToolUse", argvEvent: "pre-tool-use", matcher: EDIT_TOOLS, timeout: 10 },
  {
    wireEvent: "PostToolUse",
    argvEvent: "post-tool-use",
    matcher: POST_TOOLS,
    timeout: POST_TOOL_USE_TIMEOUT_S.claude,
  },
];

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
  name: "claude",
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
      { label: "user scope", path: claudeJson, format: "json", servers: () => ["mcpServers"] },
      { label: "local scope", path: claudeJson, format: "json", servers: (ctx) => ["projects", ctx.cwd, "mcpServers"] },
      {
        label: "the project's .mcp.json",
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
