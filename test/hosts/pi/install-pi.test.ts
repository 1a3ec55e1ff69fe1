// The Pi client of the installer, through the compiled binary in a fake home: one file of ours,
// extensions/velesdb-hooks.ts in Pi's agent directory ($PI_CODING_AGENT_DIR respected), a module
// whose default export registers its handlers and that imports nothing but node:child_process; a
// second install changes no byte; uninstall deletes exactly that file; check says when the binary
// is gone; install --mcp writes pi-mcp-adapter's Pi-owned mcp.json.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("pi", { clients: ["pi"] });
});
afterEach(() => box.cleanup());

const C = ["--client", "pi"];
const agentDir = (): string => path.join(box.home, ".pi", "agent");
const extension = (dir = agentDir()): string => path.join(dir, "extensions", "velesdb-hooks.ts");
const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};

describe("the extension file", () => {
  test("install writes one module naming the stable binary; its default export registers the four handlers", async () => {
    ok(["install", ...C]);
    const text = read(extension());
    expect(text).toContain(`const BINARY = ${JSON.stringify(box.stableBinary)};`);
    expect(text.startsWith("// velesdb-hooks:begin")).toBe(true);
    expect([...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1])).toEqual(["node:child_process"]);
    const module = (await import(extension())) as { default: (pi: unknown) => void };
    const events: string[] = [];
    module.default({ on: (event: string) => events.push(event), sendUserMessage: () => undefined });
    expect(events.sort()).toEqual(["before_agent_start", "tool_call", "tool_result", "turn_end"]);
  });

  test("a second install changes no byte; uninstall deletes the file and leaves the user's files alone", () => {
    const mine = path.join(agentDir(), "extensions", "mine.ts");
    const settings = path.join(agentDir(), "settings.json");
    write(mine, "export default function () {}\n");
    write(settings, '{"extensions":["/x/pi-mcp-adapter/index.ts"]}\n');
    ok(["install", ...C]);
    const installed = read(extension());
    expect(ok(["install", ...C]).stdout).toContain("already in step; unchanged");
    expect(read(extension())).toBe(installed);
    ok(["uninstall", ...C]);
    expect(fs.existsSync(extension())).toBe(false);
    expect(fs.readdirSync(path.dirname(extension()))).toEqual(["mine.ts"]);
    expect(read(settings)).toBe('{"extensions":["/x/pi-mcp-adapter/index.ts"]}\n');
  });

  test("PI_CODING_AGENT_DIR is where Pi looks, so install writes there; a relative one is refused", () => {
    const other = path.join(box.root, "agent");
    ok(["install", ...C], { PI_CODING_AGENT_DIR: other });
    expect(fs.existsSync(extension(other))).toBe(true);
    expect(fs.existsSync(extension())).toBe(false);
    const relative = box.run(["install", ...C], { env: { PI_CODING_AGENT_DIR: "rel" } });
    expect(relative.exitCode).toBe(1);
    expect(relative.stderr).toContain("PI_CODING_AGENT_DIR");
  });

  test("install without --client picks Pi when ~/.pi/agent exists (control: not when it does not)", () => {
    ok(["install"]);
    expect(fs.existsSync(extension())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(agentDir(), { recursive: true });
    expect(box.run(["install"]).exitCode).toBe(1);
    expect(fs.existsSync(extension())).toBe(false);
  });
});

describe("check", () => {
  test("in step after install; drift when the binary is gone, with its repair", () => {
    ok(["install", ...C]);
    expect(ok(["check", ...C]).stdout).toContain("pi: Pi extension in step");
    expect(ok(["doctor", ...C]).stdout).toContain("Pi extension in step");
    fs.rmSync(box.stableBinary);
    const gone = box.run(["check", ...C]);
    expect(gone.exitCode).toBe(1);
    expect(gone.stdout).toContain("which does not exist: Pi runs without any velesdb-hooks rule");
    expect(gone.stdout).toContain("velesdb-hooks install --client pi");
  });
});
