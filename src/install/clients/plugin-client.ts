// The installer client of an agent whose hooks are an in-process plugin module, not a registry
// of commands: OpenCode, and Kilo Code, its fork, which loads the same plugin API from its own
// directory. Our one file is <config directory>/plugin/velesdb-hooks.js, written whole as a
// marked section in `//` comments (rules.ts): install creates it, a second install changes no
// byte, uninstall deletes it (install created it and nothing else is in it). The module holds
// the stable binary's path; its code is opencode-plugin.ts. The agent's config files are the
// user's; `install --mcp` adds only its `mcp.velesdb-memory` entry.
//
// A local MCP server is `{"type":"local","command":[argv…]}` (an ARRAY: program and arguments),
// a remote one `{"type":"remote","url":…}` (measured on opencode-ai 1.18.33 and kilo 7.7.7).
import * as fs from "node:fs";
import * as path from "node:path";
import { absoluteOverride, shown, type InstallerContext } from "../paths.ts";
import { installCommand } from "../report.ts";
import { fileInHome, type InstallerClient, type McpFile } from "./client.ts";
import { opencodePluginBody } from "./opencode-plugin.ts";

export interface PluginAgent {
  /** `--client <name>`, and the first argument the plugin passes to the binary. */
  readonly name: string;
  /** What messages call the agent: "OpenCode". */
  readonly title: string;
  /** The config directory's name under $XDG_CONFIG_HOME (else ~/.config). */
  readonly configDirName: string;
  /** Where the agent reads MCP servers, given its config directory's home; install writes the first. */
  mcpFiles(home: InstallerClient["home"]): readonly [McpFile, ...McpFile[]];
}

/** A file in the agent's config directory holding an `mcp` table. */
export const configMcpFile = (home: InstallerClient["home"], name: string): McpFile => ({ label: name, path: fileInHome(home, name), format: "json", servers: () => ["mcp"] });

/** A file under the project's directory holding an `mcp` table. */
export const projectMcpFile = (...segments: string[]): McpFile => ({
  label: `the project's ${segments.join("/")}`,
  path: (ctx) => ({ ok: true, path: path.join(ctx.cwd, ...segments) }),
  format: "json",
  servers: () => ["mcp"],
});

/** pluginClient(agent) → the installer client writing our plugin into the agent's config directory. */
export function pluginClient(agent: PluginAgent): InstallerClient {
  const home: InstallerClient["home"] = (ctx) => {
    const config = absoluteOverride(ctx, "XDG_CONFIG_HOME", path.join(ctx.home, ".config"));
    return config.ok ? { ok: true, path: path.join(config.path, agent.configDirName) } : config;
  };
  /** The plugin's path; under an unusable XDG_CONFIG_HOME, the default (primaryPath reports the problem first). */
  const pluginPath = (ctx: InstallerContext): string => {
    const dir = home(ctx);
    return path.join(dir.ok ? dir.path : path.join(ctx.home, ".config", agent.configDirName), "plugin", "velesdb-hooks.js");
  };
  const alsoNamesBinary = (ctx: InstallerContext, stable: string): string | undefined => {
    const file = pluginPath(ctx);
    try {
      return fs.readFileSync(file, "utf8").includes(JSON.stringify(stable)) ? file : undefined;
    } catch {
      return undefined;
    }
  };
  const client: InstallerClient = {
    name: agent.name,
    home,
    mcp: {
      files: agent.mcpFiles(home),
      stdio: (command) => ({ type: "local", command: [command], enabled: true }),
      url: (url) => ({ type: "remote", url, enabled: true }),
    },
    sections: [
      {
        label: `${agent.title} plugin`,
        path: pluginPath,
        body: (stable) => opencodePluginBody(stable, agent.name),
        comment: "line",
        markerNote: () => `written by \`velesdb-hooks install --client ${agent.name}\`; \`velesdb-hooks uninstall\` deletes this file`,
      },
    ],
    alsoNamesBinary,
    report(ctx, facts) {
      // The plugin fails open: with the binary gone the agent runs as if it had no hooks, silently.
      if (fs.existsSync(facts.stable) || alsoNamesBinary(ctx, facts.stable) === undefined) return { lines: [], drifted: false, repairs: [], doctor: [] };
      const line = `${agent.name}: the plugin runs ${shown(ctx, facts.stable)}, which does not exist: ${agent.title} runs without any velesdb-hooks rule`;
      return { lines: [line], drifted: true, repairs: [installCommand(ctx, client)], doctor: [] };
    },
  };
  return client;
}
