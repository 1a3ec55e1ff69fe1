// The Kilo Code client of the installer, through the compiled binary in a fake home: OpenCode's
// plugin module written into Kilo's config directory (~/.config/kilo/plugin/velesdb-hooks.js,
// $XDG_CONFIG_HOME respected), its spawns naming the `kilo` host; a second install changes no
// byte; uninstall deletes exactly that file; OpenCode's plugin and Kilo's live side by side,
// each removed alone; check says when the binary is gone.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("kilo", { clients: ["kilo"] });
});
afterEach(() => box.cleanup());

const C = ["--client", "kilo"];
const configDir = (): string => path.join(box.home, ".config", "kilo");
const plugin = (dir = configDir()): string => path.join(dir, "plugin", "velesdb-hooks.js");
const opencodePlugin = (): string => path.join(box.home, ".config", "opencode", "plugin", "velesdb-hooks.js");
const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};

describe("the plugin file", () => {
  test("install writes OpenCode's module, its spawns naming kilo; Node imports it and finds the plugin factory", async () => {
    ok(["install", ...C]);
    const text = read(plugin());
    expect(text).toContain(`const BINARY = ${JSON.stringify(box.stableBinary)};`);
    expect(text).toContain('spawnSync(BINARY, ["kilo", event]');
    expect(text).not.toContain('"opencode"');
    expect(text).toContain("velesdb-hooks install --client kilo");
    expect(fs.statSync(plugin()).mode & 0o777).toBe(0o600);
    const module = (await import(plugin())) as Record<string, unknown>;
    expect(Object.keys(module)).toEqual(["VelesdbHooks"]);
  });

  test("a second install changes no byte; uninstall deletes the file and leaves the user's files alone", () => {
    const userConfig = path.join(configDir(), "kilo.json");
    const userPlugin = path.join(configDir(), "plugin", "mine.js");
    write(userConfig, '{\n  // mine\n  "model": "x/y"\n}\n');
    write(userPlugin, "export const Mine = async () => ({});\n");
    ok(["install", ...C]);
    const installed = read(plugin());
    expect(ok(["install", ...C]).stdout).toContain("already in step; unchanged");
    expect(read(plugin())).toBe(installed);
    ok(["uninstall", ...C]);
    expect(fs.existsSync(plugin())).toBe(false);
    expect(read(userConfig)).toBe('{\n  // mine\n  "model": "x/y"\n}\n');
    expect(read(userPlugin)).toBe("export const Mine = async () => ({});\n");
    expect(fs.readdirSync(path.dirname(plugin()))).toEqual(["mine.js"]);
  });

  test("OpenCode's plugin and Kilo's side by side, each spawning its own host; uninstalling one keeps the other and the binary", () => {
    fs.mkdirSync(path.join(box.home, ".config", "opencode"), { recursive: true });
    ok(["install", "--client", "opencode"]);
    ok(["install", ...C]);
    expect(read(opencodePlugin())).toContain('spawnSync(BINARY, ["opencode", event]');
    expect(read(plugin())).toContain('spawnSync(BINARY, ["kilo", event]');
    const run = ok(["uninstall", ...C]);
    expect(fs.existsSync(plugin())).toBe(false);
    expect(fs.existsSync(opencodePlugin())).toBe(true);
    expect(run.stdout).toContain("binary: kept at");
    expect(fs.existsSync(box.stableBinary)).toBe(true);
  });

  test("XDG_CONFIG_HOME is where Kilo looks, so install writes there; a relative one is refused", () => {
    const xdg = path.join(box.root, "xdg");
    ok(["install", ...C], { XDG_CONFIG_HOME: xdg });
    expect(fs.existsSync(plugin(path.join(xdg, "kilo")))).toBe(true);
    expect(fs.existsSync(plugin())).toBe(false);
    const relative = box.run(["install", ...C], { env: { XDG_CONFIG_HOME: "rel" } });
    expect(relative.exitCode).toBe(1);
    expect(relative.stderr).toContain("XDG_CONFIG_HOME is set to a relative path");
  });

  test("install without --client picks Kilo when ~/.config/kilo exists (control: not when it does not)", () => {
    ok(["install"]);
    expect(fs.existsSync(plugin())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(configDir(), { recursive: true });
    expect(box.run(["install"]).exitCode).toBe(1);
    expect(fs.existsSync(plugin())).toBe(false);
  });
});

describe("check and doctor", () => {
  test("in step after install; drift when the binary is gone, with its repair", () => {
    ok(["install", ...C]);
    expect(ok(["check", ...C]).stdout).toContain("kilo: Kilo Code plugin in step");
    expect(ok(["doctor", ...C]).stdout).toContain("kilo");
    fs.rmSync(box.stableBinary);
    const gone = box.run(["check", ...C]);
    expect(gone.exitCode).toBe(1);
    expect(gone.stdout).toContain("which does not exist: Kilo Code runs without any velesdb-hooks rule");
    expect(gone.stdout).toContain("velesdb-hooks install --client kilo");
  });

  test("a server in the legacy ~/.kilocode/kilo.json or the project's .kilo/kilo.json counts; none at all is missing", () => {
    fs.rmSync(path.join(configDir(), "kilo.json")); // the sandbox's server of the user's
    ok(["install", ...C]);
    const missing = box.run(["check", ...C]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout).toContain("kilo: MCP server velesdb-memory missing");
    const entry = `{"mcp":{"velesdb-memory":{"type":"local","command":["/bin/sh"],"enabled":true}}}\n`;
    write(path.join(box.home, ".kilocode", "kilo.json"), entry);
    expect(ok(["check", ...C]).stdout).toContain("kilo: MCP server velesdb-memory configured");
    fs.rmSync(path.join(box.home, ".kilocode"), { recursive: true });
    const project = path.join(box.root, "project");
    write(path.join(project, ".kilo", "kilo.json"), entry);
    const inProject = box.run(["check", ...C], { cwd: project });
    expect({
      exitCode: inProject.exitCode,
      configured: inProject.stdout.includes("kilo: MCP server velesdb-memory configured"),
    }).toEqual({ exitCode: 0, configured: true });
    // Control: the same check from elsewhere finds no server.
    expect(box.run(["check", ...C]).exitCode).toBe(1);
  });
});
