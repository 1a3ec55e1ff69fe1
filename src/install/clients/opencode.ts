// OpenCode: no command hooks and so no registry; our one file is a plugin module,
// <OpenCode's config directory>/plugin/velesdb-hooks.js ($XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode), which OpenCode loads at start with every other `plugin/*.js`
// (plugin-client.ts says how it is written and removed).
//
// MCP servers (measured on opencode-ai 1.18.33: its config schema and `opencode mcp list`):
// the `mcp` table of the global config — config.json, opencode.json and opencode.jsonc in
// OpenCode's config directory, merged — and of the project's opencode.json / opencode.jsonc.
// Its tools reach the model as `<server>_<tool>` (`velesdb-memory_recall`), the name's `-` kept.
import * as path from "node:path";
import { OPENCODE } from "../../hosts/opencode.ts";
import { opencodePluginBody } from "./opencode-plugin.ts";
import { configMcpFile, pluginClient, projectMcpFile, xdgConfigHome } from "./plugin-client.ts";

const home = xdgConfigHome("opencode");

export const opencode = pluginClient({
  descriptor: OPENCODE,
  title: "OpenCode",
  home,
  pluginFile: ["plugin", "velesdb-hooks.js"],
  fallbackHome: (ctx) => path.join(ctx.home, ".config", "opencode"),
  body: (stable) => opencodePluginBody(stable, OPENCODE),
  mcpFiles: [
    configMcpFile(home, "opencode.json"),
    configMcpFile(home, "opencode.jsonc"),
    configMcpFile(home, "config.json"),
    projectMcpFile("opencode.json"),
    projectMcpFile("opencode.jsonc"),
  ],
});
