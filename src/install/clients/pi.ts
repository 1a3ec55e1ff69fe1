// Pi coding agent: no command hooks and so no registry; our one file is an extension module,
// <Pi's agent directory>/extensions/velesdb-hooks.ts ($PI_CODING_AGENT_DIR, else ~/.pi/agent),
// which Pi discovers at start with every other `extensions/*.ts` (plugin-client.ts says how it
// is written and removed; its code is pi-extension.ts).
//
// MCP servers: Pi has none of its own ("No MCP", its README); the pi-mcp-adapter extension adds
// them. It reads `mcpServers` from ~/.config/mcp/mcp.json (shared by hosts), <agent
// dir>/mcp.json (Pi's own override), the project's .mcp.json and .pi/mcp.json (its README and
// config.ts, 2.11.0), entries `{command, args}` or `{url}`. install writes the Pi-owned file, so
// no other host's shared config changes. Without the adapter those files do nothing: the docs
// (docs/hosts/pi.md) say what to install.
import * as path from "node:path";
import { PI } from "../../hosts/pi.ts";
import { absoluteOverride } from "../paths.ts";
import { fileInHome, type InstallerClient, type McpFile } from "../client.ts";
import { piExtensionBody } from "./pi-extension.ts";
import { pluginClient } from "./plugin-client.ts";

const home: InstallerClient["home"] = (ctx) =>
  absoluteOverride(ctx, "PI_CODING_AGENT_DIR", path.join(ctx.home, ".pi", "agent"));

const servers = (label: string, scope: McpFile["scope"], file: McpFile["path"]): McpFile => ({
  label,
  scope,
  path: file,
  format: "json",
  servers: () => ["mcpServers"],
});
const inCwd =
  (...segments: string[]): McpFile["path"] =>
  (ctx) => ({ ok: true, path: path.join(ctx.cwd, ...segments) });

export const pi = pluginClient({
  descriptor: PI,
  title: "Pi",
  moduleKind: "extension",
  home,
  pluginFile: ["extensions", "velesdb-hooks.ts"],
  fallbackHome: (ctx) => path.join(ctx.home, ".pi", "agent"),
  body: piExtensionBody,
  mcpFiles: [
    servers("mcp.json", "user", fileInHome(home, "mcp.json")),
    servers("~/.config/mcp/mcp.json", "user", (ctx) => ({
      ok: true,
      path: path.join(ctx.home, ".config", "mcp", "mcp.json"),
    })),
    servers("the project's .mcp.json", "project", inCwd(".mcp.json")),
    servers("the project's .pi/mcp.json", "project", inCwd(".pi", "mcp.json")),
  ],
  mcpEntries: { stdio: (command, args) => ({ command, args: [...args] }), url: (url) => ({ url }) },
});
