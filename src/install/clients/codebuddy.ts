// CodeBuddy Code (2.117.0): grouped Claude-shaped handlers under "hooks" in
// ~/.codebuddy/settings.json ($CODEBUDDY_CONFIG_DIR honoured, as the CLI does for its home).
// `timeout` is in seconds. CodeBuddy runs `command` through $SHELL (Git Bash on Windows, where
// cmd.exe and PowerShell are not supported), so the path is POSIX-quoted on every platform.
// Events: no Bash row (CodeBuddy cannot replace a built-in tool's output) and no PreCompact
// (it can only block there); see src/hosts/codebuddy.ts.
//
// MCP servers (CodeBuddy's MCP page, shipped in the SDK's copy of the CLI under its web UI's
// English CLI docs, and the bundle's file names): the user scope is the FIRST file that exists
// of ~/.codebuddy/.mcp.json, ~/.codebuddy/mcp.json and ~/.codebuddy.json — the others are not
// read at all — so install writes into that one (creating ~/.codebuddy/.mcp.json when none
// exists): a new .mcp.json beside a user's mcp.json would hide all of the user's servers. The local scope is
// ~/.codebuddy.json `projects.<cwd>.mcpServers`; the project scope the first of the project's
// .mcp.json and mcp.json, used once approved. Entries are `{type, command, args, env}`.
import * as fs from "node:fs";
import * as path from "node:path";
import { CODEBUDDY } from "../../hosts/codebuddy.ts";
import { absoluteOverride, type InstallerContext, type Resolved } from "../paths.ts";
import { posixQuote } from "../entries/shell-words.ts";
import { fileInHome, rowsOf, type InstallerClient, type McpFile, type RegistryClient } from "../client.ts";

// Events, matchers and timeouts (seconds): the descriptor (src/hosts/descriptors/codebuddy.ts).
const ROWS = rowsOf(CODEBUDDY);

const home: InstallerClient["home"] = (ctx) =>
  absoluteOverride(ctx, "CODEBUDDY_CONFIG_DIR", path.join(ctx.home, ".codebuddy"));

/** firstExisting(candidates) → the first path that exists (CodeBuddy reads only that one), else the first. */
function firstExisting(candidates: readonly string[]): string {
  return candidates.find((file) => fs.existsSync(file)) ?? candidates[0]!;
}

const codebuddyJson = (ctx: InstallerContext): string => path.join(ctx.home, ".codebuddy.json");

const userScope: McpFile["path"] = (ctx): Resolved => {
  const dir = home(ctx);
  return dir.ok
    ? {
        ok: true,
        path: firstExisting([path.join(dir.path, ".mcp.json"), path.join(dir.path, "mcp.json"), codebuddyJson(ctx)]),
      }
    : dir;
};

const projectScope: McpFile["path"] = (ctx) => ({
  ok: true,
  path: firstExisting([path.join(ctx.cwd, ".mcp.json"), path.join(ctx.cwd, "mcp.json")]),
});

export const codebuddy: RegistryClient = {
  name: CODEBUDDY.name,
  descriptor: CODEBUDDY,
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler: (row, binaryPath) => ({
      type: "command",
      command: `${posixQuote(binaryPath)} codebuddy ${row.argvEvent}`,
      timeout: row.timeout,
    }),
  },
  mcp: {
    files: [
      { label: "user scope", scope: "user", path: userScope, format: "json", servers: () => ["mcpServers"] },
      {
        label: "local scope",
        scope: "user",
        path: (ctx) => ({ ok: true, path: codebuddyJson(ctx) }),
        format: "json",
        servers: (ctx) => ["projects", ctx.cwd, "mcpServers"],
      },
      {
        label: "the project's .mcp.json",
        scope: "project",
        path: projectScope,
        format: "json",
        servers: () => ["mcpServers"],
        needsApproval: true,
      },
    ],
    // The shapes of CodeBuddy's `mcp add-json` examples.
    stdio: (command, args) => ({ type: "stdio", command, args: [...args] }),
    url: (url) => ({ type: "http", url }),
  },
};
