// Kilo Code CLI (measured on @kilocode/cli-linux-x64 7.7.7, offline): a fork of OpenCode with
// the same plugin API, so our OpenCode plugin module serves it unchanged, written into Kilo's
// own config directory: <$XDG_CONFIG_HOME, else ~/.config>/kilo/plugin/velesdb-hooks.js. Its
// spawns name the `kilo` host (src/hosts/kilo.ts), so Kilo's session state is its own. Kilo
// never reads ~/.config/opencode, so a user with both agents gets each plugin once.
//
// MCP servers (measured with `kilo mcp list`): the `mcp` table of kilo.json, config.json and
// opencode.json in Kilo's config directory, of the legacy ~/.kilocode/kilo.json, and of the
// project's kilo.json, opencode.json and .kilo/kilo.json; the .jsonc twins and .kilocode/ are in
// the same lists of the binary. Entries are OpenCode's (`command` an argv array); tools reach the
// model as `velesdb-memory_<tool>`. install writes kilo.json, the file Kilo's docs name.
import * as path from "node:path";
import { KILO } from "../../hosts/kilo.ts";
import type { McpFile } from "../client.ts";
import { opencodePluginBody } from "./opencode-plugin.ts";
import { configMcpFile, pluginClient, projectMcpFile, xdgConfigHome } from "./plugin-client.ts";

const legacyKilocode: McpFile = {
  label: "~/.kilocode/kilo.json",
  scope: "user",
  path: (ctx) => ({ ok: true, path: path.join(ctx.home, ".kilocode", "kilo.json") }),
  format: "json",
  servers: () => ["mcp"],
};

const home = xdgConfigHome("kilo");

export const kilo = pluginClient({
  descriptor: KILO,
  title: "Kilo Code",
  home,
  pluginFile: ["plugin", "velesdb-hooks.js"],
  fallbackHome: (ctx) => path.join(ctx.home, ".config", "kilo"),
  body: (stable) => opencodePluginBody(stable, KILO),
  mcpFiles: [
    configMcpFile(home, "kilo.json"),
    configMcpFile(home, "kilo.jsonc"),
    configMcpFile(home, "config.json"),
    configMcpFile(home, "opencode.json"),
    configMcpFile(home, "opencode.jsonc"),
    legacyKilocode,
    projectMcpFile("kilo.json"),
    projectMcpFile("kilo.jsonc"),
    projectMcpFile("opencode.json"),
    projectMcpFile("opencode.jsonc"),
    projectMcpFile(".kilo", "kilo.json"),
    projectMcpFile(".kilocode", "kilo.json"),
  ],
});
