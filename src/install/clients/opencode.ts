// OpenCode: no command hooks and so no registry; our one file is a plugin module,
// <OpenCode's config directory>/plugin/velesdb-hooks.js ($XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode), which OpenCode loads at start with every other `plugin/*.js`. The
// file is written whole as a marked section in `//` comments (rules.ts): install creates it,
// a second install changes no byte, uninstall deletes it (install created it and nothing else
// is in it). The module holds the stable binary's path; its code is opencode-plugin.ts.
// opencode.json is the user's; `install --mcp` adds only its `mcp.velesdb-memory` entry.
//
// MCP servers (measured on opencode-ai 1.18.33: its config schema and `opencode mcp list`):
// the `mcp` table of the global config — config.json, opencode.json and opencode.jsonc in
// OpenCode's config directory, merged — and of the project's opencode.json / opencode.jsonc.
// A local server is `{"type":"local","command":[argv…]}` (an ARRAY: program and arguments), a
// remote one `{"type":"remote","url":…}`; `enabled: false` keeps it off. Its tools reach the
// model as `<server>_<tool>` (`velesdb-memory_recall`), the name's `-` kept.
import * as fs from "node:fs";
import * as path from "node:path";
import { absoluteOverride, shown } from "../paths.ts";
import { installCommand } from "../report.ts";
import { fileInHome, type InstallerClient, type McpFile } from "./client.ts";
import { opencodePluginBody } from "./opencode-plugin.ts";

const home: InstallerClient["home"] = (ctx) => {
  const config = absoluteOverride(ctx, "XDG_CONFIG_HOME", path.join(ctx.home, ".config"));
  return config.ok ? { ok: true, path: path.join(config.path, "opencode") } : config;
};

/** The plugin's path; under an unusable XDG_CONFIG_HOME, the default (primaryPath reports the problem first). */
const pluginPath = (ctx: Parameters<InstallerClient["home"]>[0]): string => {
  const dir = home(ctx);
  return path.join(dir.ok ? dir.path : path.join(ctx.home, ".config", "opencode"), "plugin", "velesdb-hooks.js");
};

const globalConfig = (name: string): McpFile => ({ label: name, path: fileInHome(home, name), format: "json", servers: () => ["mcp"] });
const projectConfig = (name: string): McpFile => ({ label: `the project's ${name}`, path: (ctx) => ({ ok: true, path: path.join(ctx.cwd, name) }), format: "json", servers: () => ["mcp"] });

export const opencode: InstallerClient = {
  name: "opencode",
  home,
  mcp: {
    files: [globalConfig("opencode.json"), globalConfig("opencode.jsonc"), globalConfig("config.json"), projectConfig("opencode.json"), projectConfig("opencode.jsonc")],
    stdio: (command, args) => ({ type: "local", command: [command, ...args], enabled: true }),
    url: (url) => ({ type: "remote", url, enabled: true }),
  },
  sections: [
    {
      label: "OpenCode plugin",
      path: pluginPath,
      body: opencodePluginBody,
      comment: "line",
      markerNote: () => "written by `velesdb-hooks install --client opencode`; `velesdb-hooks uninstall` deletes this file",
      ownFile: "OpenCode loads it as a plugin of yours",
    },
  ],
  alsoNamesBinary(ctx, stable) {
    const file = pluginPath(ctx);
    try {
      return fs.readFileSync(file, "utf8").includes(JSON.stringify(stable)) ? file : undefined;
    } catch {
      return undefined;
    }
  },
  report(ctx, facts) {
    // The plugin fails open: with the binary gone OpenCode runs as if it had no hooks, silently.
    if (fs.existsSync(facts.stable) || opencode.alsoNamesBinary?.(ctx, facts.stable) === undefined) return { lines: [], drifted: false, repairs: [], doctor: [] };
    const line = `opencode: the plugin runs ${shown(ctx, facts.stable)}, which does not exist: OpenCode runs without any velesdb-hooks rule`;
    return { lines: [line], drifted: true, repairs: [installCommand(ctx, opencode)], doctor: [] };
  },
};
