// The OpenCode client of the installer, through the compiled binary in a fake home: one file of
// ours, plugin/velesdb-hooks.js in OpenCode's config directory ($XDG_CONFIG_HOME respected),
// an ES module naming the stable binary that Node can import; a second install changes no byte;
// uninstall deletes exactly that file; check and doctor say when the binary or the file drifts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, treeDigest, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("opencode", { clients: ["opencode"] });
});
afterEach(() => box.cleanup());

const C = ["--client", "opencode"];
const configDir = (): string => path.join(box.home, ".config", "opencode");
const plugin = (dir = configDir()): string => path.join(dir, "plugin", "velesdb-hooks.js");
const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};

describe("the plugin file", () => {
  test("install writes one module (mode 600) naming the stable binary; Node imports it and finds the plugin factory", async () => {
    const before = treeDigest(configDir());
    ok(["install", ...C]);
    const text = read(plugin());
    expect(text).toContain(`const BINARY = ${JSON.stringify(box.stableBinary)};`);
    expect(text.startsWith("// velesdb-hooks:begin")).toBe(true);
    expect(text).not.toContain("@opencode-ai/plugin");
    expect(fs.statSync(plugin()).mode & 0o777).toBe(0o600);
    const module = (await import(plugin())) as Record<string, unknown>;
    expect(Object.keys(module)).toEqual(["VelesdbHooks"]);
    const hooks = (await (module.VelesdbHooks as (ctx: unknown) => Promise<Record<string, unknown>>)({
      client: {},
      directory: box.home,
    })) as Record<string, unknown>;
    expect(Object.keys(hooks).sort()).toEqual([
      "event",
      "experimental.chat.system.transform",
      "experimental.session.compacting",
      "tool.execute.after",
      "tool.execute.before",
    ]);
    expect(before).not.toEqual(treeDigest(configDir()));
  });

  test("a second install changes no byte; uninstall deletes the file and leaves the user's files alone", () => {
    const userConfig = path.join(configDir(), "opencode.json");
    const userPlugin = path.join(configDir(), "plugin", "mine.js");
    write(userConfig, '{\n  // mine\n  "model": "x/y"\n}\n');
    write(userPlugin, "export const Mine = async () => ({});\n");
    ok(["install", ...C]);
    const installed = read(plugin());
    const second = ok(["install", ...C]);
    expect(second.stdout).toContain("already in step; unchanged");
    expect(read(plugin())).toBe(installed);
    ok(["uninstall", ...C]);
    expect(fs.existsSync(plugin())).toBe(false);
    expect(read(userConfig)).toBe('{\n  // mine\n  "model": "x/y"\n}\n');
    expect(fs.readdirSync(path.dirname(plugin()))).toEqual(["mine.js"]);
  });

  test("XDG_CONFIG_HOME is where OpenCode looks, so install writes there; a relative one is refused", () => {
    const xdg = path.join(box.root, "xdg");
    ok(["install", ...C], { XDG_CONFIG_HOME: xdg });
    expect(fs.existsSync(plugin(path.join(xdg, "opencode")))).toBe(true);
    expect(fs.existsSync(plugin())).toBe(false);
    const relative = box.run(["install", ...C], { env: { XDG_CONFIG_HOME: "rel" } });
    expect(relative.exitCode).toBe(1);
    expect(relative.stderr).toContain("XDG_CONFIG_HOME is set to a relative path");
  });

  test("install without --client picks OpenCode when its config directory exists (control: not when it does not)", () => {
    ok(["install"]);
    expect(fs.existsSync(plugin())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(configDir(), { recursive: true });
    const none = box.run(["install"]);
    expect(none.exitCode).toBe(1);
    expect(fs.existsSync(plugin())).toBe(false);
  });
});

describe("a plugin/velesdb-hooks.js that is not ours (docs/hardening.md §3)", () => {
  // A user's own module at our name: appending ours to it gave
  // "SyntaxError: Identifier 'spawnSync' has already been declared", and neither plugin loaded.
  const USER_MODULE =
    'import { spawnSync } from "node:child_process";\n\nexport const MyVelesdb = async () => ({ event: async () => { spawnSync("true"); } });\n';
  test("install refuses it in one line naming the file and what to do; not a byte changed, it still loads; check says the same", async () => {
    write(plugin(), USER_MODULE);
    const before = treeDigest(box.root);
    const run = box.run(["install", ...C]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      "~/.config/opencode/plugin/velesdb-hooks.js is not ours (it holds no velesdb-hooks section; OpenCode loads it as a plugin of yours): rename it, then run install again",
    );
    expect(run.stderr).toContain("nothing was changed");
    expect(treeDigest(box.root)).toBe(before);
    expect(Object.keys((await import(plugin())) as object)).toEqual(["MyVelesdb"]);
    const check = box.run(["check", ...C]);
    expect(check.exitCode).toBe(1);
    expect(check.stdout).toContain("is not ours");
    expect(check.stdout).toContain("repair: fix ~/.config/opencode/plugin/velesdb-hooks.js");
    // uninstall has nothing of ours there: it leaves the file as it is.
    expect(box.run(["uninstall", ...C]).exitCode).toBe(0);
    expect(read(plugin())).toBe(USER_MODULE);
  });
  test("control: renamed as told, the user's module and ours are both there and both load", async () => {
    write(plugin(), USER_MODULE);
    fs.renameSync(plugin(), path.join(path.dirname(plugin()), "my-velesdb.js"));
    ok(["install", ...C]);
    expect(Object.keys((await import(plugin())) as object)).toEqual(["VelesdbHooks"]);
    expect(Object.keys((await import(path.join(path.dirname(plugin()), "my-velesdb.js"))) as object)).toEqual([
      "MyVelesdb",
    ]);
  });
  test("our own file, written by an older install (another binary path, older code), is updated in place: one module, it loads", async () => {
    ok(["install", ...C]);
    const current = read(plugin());
    const older = current
      .replace(JSON.stringify(box.stableBinary), JSON.stringify("/old/velesdb-hooks"))
      .replace("const text = ", "const text = /* older */ ");
    expect(older).not.toBe(current);
    write(plugin(), older, 0o600);
    const updated = ok(["install", ...C]);
    expect(updated.stdout).not.toContain("already in step");
    expect(read(plugin())).toBe(current);
    expect(read(plugin()).match(/import \{ spawnSync \}/g)).toHaveLength(1);
    expect(Object.keys((await import(`${plugin()}?v=updated`)) as object)).toEqual(["VelesdbHooks"]);
  });
});

describe("check", () => {
  test("in step after install; drift when the file is edited or the binary is gone, each with its repair", () => {
    ok(["install", ...C]);
    expect(ok(["check", ...C]).stdout).toContain("opencode: OpenCode plugin in step");
    fs.writeFileSync(plugin(), read(plugin()).replace("spawnSync(BINARY,", "spawnSync(OTHER,"));
    const edited = box.run(["check", ...C]);
    expect(edited.exitCode).toBe(1);
    expect(edited.stdout + edited.stderr).toContain("velesdb-hooks install --client opencode");
    ok(["install", ...C]);
    fs.rmSync(box.stableBinary);
    const gone = box.run(["check", ...C]);
    expect(gone.exitCode).toBe(1);
    expect(gone.stdout).toContain("which does not exist: OpenCode runs without any velesdb-hooks rule");
  });

  test("uninstall of another client keeps the binary while the plugin still names it", () => {
    fs.mkdirSync(path.join(box.home, ".claude"), { recursive: true });
    ok(["install", "--client", "opencode"]);
    ok(["install", "--client", "claude"]);
    const run = ok(["uninstall", "--client", "claude"]);
    expect(run.stdout).toContain("binary: kept at");
    expect(fs.existsSync(box.stableBinary)).toBe(true);
  });
});
