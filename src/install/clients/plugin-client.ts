// The installer client of an agent whose hooks are an in-process plugin module, not a registry
// of commands: OpenCode and Kilo Code, its fork (opencode-plugin.ts), and Pi (pi-extension.ts).
// Our one file is that module, written whole as a marked section in `//` comments (rules.ts):
// install creates it, a second install changes no byte, uninstall deletes it (install created
// it and nothing else is in it). The module holds the stable binary's path. The agent's config
// files are the user's; `install --mcp` adds only its velesdb-memory entry.
//
// OpenCode's and Kilo's local MCP server is `{"type":"local","command":[argv…]}` (an ARRAY:
// program and arguments), a remote one `{"type":"remote","url":…}` (measured on opencode-ai
// 1.18.33 and kilo 7.7.7).
import * as fs from "node:fs";
import * as path from "node:path";
import type { HostDescriptor } from "../../hosts/descriptors/descriptor.ts";
import { absoluteOverride, shown, type InstallerContext } from "../paths.ts";
import { installCommand } from "../check/report.ts";
import { fileInHome, type InstallerClient, type McpFile, type McpSpec } from "../client.ts";

export interface PluginAgent {
  /** The host as data (src/hosts/descriptors/): its name is `--client <name>` and the first argument the plugin passes to the binary. */
  readonly descriptor: HostDescriptor;
  /** What messages call the agent: "OpenCode". */
  readonly title: string;
  /** What the agent calls such a module; default "plugin" (Pi: "extension"). */
  readonly moduleKind?: string;
  /** The agent's directory, where its plugins and config live. */
  readonly home: InstallerClient["home"];
  /** Where the plugin file goes, below the home, and the home to assume when it is unusable (primaryPath reports that first). */
  readonly pluginFile: readonly string[];
  fallbackHome(ctx: InstallerContext): string;
  /** body(stable) → the plugin module's code. */
  body(stable: string): string;
  /** Where the agent reads MCP servers; install writes the first. */
  readonly mcpFiles: readonly [McpFile, ...McpFile[]];
  /** The MCP server entries in the agent's shape; default OpenCode's (`command` an argv array). */
  readonly mcpEntries?: Pick<McpSpec, "stdio" | "url">;
}

/** xdgConfigHome("opencode") → a `home`: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode. */
export function xdgConfigHome(dirName: string): InstallerClient["home"] {
  return (ctx) => {
    const config = absoluteOverride(ctx, "XDG_CONFIG_HOME", path.join(ctx.home, ".config"));
    return config.ok ? { ok: true, path: path.join(config.path, dirName) } : config;
  };
}

/** A file in the agent's config directory holding an `mcp` table (OpenCode's, Kilo's). */
export const configMcpFile = (home: InstallerClient["home"], name: string): McpFile => ({
  label: name,
  scope: "user",
  path: fileInHome(home, name),
  format: "json",
  servers: () => ["mcp"],
});

/** A file under the project's directory holding an `mcp` table. */
export const projectMcpFile = (...segments: string[]): McpFile => ({
  label: `the project's ${segments.join("/")}`,
  scope: "project",
  path: (ctx) => ({ ok: true, path: path.join(ctx.cwd, ...segments) }),
  format: "json",
  servers: () => ["mcp"],
});

/** pluginClient(agent) → the installer client writing our plugin into the agent's config directory. */
export function pluginClient(agent: PluginAgent): InstallerClient {
  const home = agent.home;
  /** The plugin's path; under an unusable home, the fallback (primaryPath reports the problem first). */
  const pluginPath = (ctx: InstallerContext): string => {
    const dir = home(ctx);
    return path.join(dir.ok ? dir.path : agent.fallbackHome(ctx), ...agent.pluginFile);
  };
  const alsoNamesBinary = (ctx: InstallerContext, stable: string): string | undefined => {
    const file = pluginPath(ctx);
    try {
      return fs.readFileSync(file, "utf8").includes(JSON.stringify(stable)) ? file : undefined;
    } catch {
      return undefined;
    }
  };
  const name = agent.descriptor.name;
  const client: InstallerClient = {
    name,
    descriptor: agent.descriptor,
    home,
    mcp: {
      files: agent.mcpFiles,
      ...(agent.mcpEntries ?? {
        stdio: (command: string, args: readonly string[]) => ({
          type: "local",
          command: [command, ...args],
          enabled: true,
        }),
        url: (url: string) => ({ type: "remote", url, enabled: true }),
      }),
    },
    sections: [
      {
        label: `${agent.title} ${agent.moduleKind ?? "plugin"}`,
        path: pluginPath,
        body: agent.body,
        comment: "line",
        markerNote: () =>
          `written by \`velesdb-hooks install --client ${name}\`; \`velesdb-hooks uninstall\` deletes this file`,
        ownFile: `${agent.title} loads it as a ${agent.moduleKind ?? "plugin"} of yours`,
      },
    ],
    alsoNamesBinary,
    report(ctx, facts) {
      // The plugin fails open: with the binary gone the agent runs as if it had no hooks, silently.
      if (fs.existsSync(facts.stable) || alsoNamesBinary(ctx, facts.stable) === undefined)
        return { lines: [], drifted: false, repairs: [], doctor: [] };
      const line = `${name}: the ${agent.moduleKind ?? "plugin"} runs ${shown(ctx, facts.stable)}, which does not exist: ${agent.title} runs without any velesdb-hooks rule`;
      return { lines: [line], drifted: true, repairs: [installCommand(ctx, client)], doctor: [] };
    },
  };
  return client;
}
