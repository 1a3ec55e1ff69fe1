// test/e2e/host-bins.ts: the e2e suites take every host from VH_E2E_HOSTS when it is set (how
// `npm run e2e:latest` points them at the newest hosts), else from test/e2e/node_modules.
import { afterAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "./support/hook-runner.ts";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-host-bins-")));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** hostBinsUnder(env) → HOST_BINS and the bridge entry as a fresh process resolves them. */
function hostBinsUnder(env: Record<string, string>): { bins: Record<string, string>; bridge: string } {
  const script = `const m = await import(${JSON.stringify(path.join(REPO_ROOT, "test", "e2e", "host-bins.ts"))});
let bridge = ""; try { bridge = m.dshBridgeEntry(); } catch (e) { bridge = "unresolved"; }
console.log(JSON.stringify({ bins: m.HOST_BINS, bridge }));`;
  const run = Bun.spawnSync([process.execPath, "-e", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new Error(run.stderr.toString());
  return JSON.parse(run.stdout.toString()) as { bins: Record<string, string>; bridge: string };
}

test("VH_E2E_HOSTS moves every host, the DeepSeek bridge module included", () => {
  const modules = path.join(root, "prefix", "node_modules");
  const bridgeDir = path.join(modules, "@deepseek-ai", "dsh-hooks-codex");
  fs.mkdirSync(bridgeDir, { recursive: true });
  fs.writeFileSync(
    path.join(bridgeDir, "package.json"),
    JSON.stringify({ name: "@deepseek-ai/dsh-hooks-codex", type: "module", main: "entry.js" }),
  );
  fs.writeFileSync(path.join(bridgeDir, "entry.js"), "export const apply = () => {};\n");
  const { bins, bridge } = hostBinsUnder({ VH_E2E_HOSTS: modules });
  expect(Object.keys(bins).sort()).toEqual([
    "claude",
    "codebuddy",
    "codex",
    "copilot",
    "droid",
    "gemini",
    "kilo",
    "opencode",
    "piCli",
    "piMcpAdapter",
    "qwenCli",
    "qwenNode",
  ]);
  for (const [host, file] of Object.entries(bins))
    expect(`${host}: ${file}`).toStartWith(`${host}: ${modules}${path.sep}`);
  expect(bridge).toBe(path.join(bridgeDir, "entry.js"));
});

test("positive control: unset, they are the pinned copies under test/e2e/node_modules", () => {
  const pinned = path.join(REPO_ROOT, "test", "e2e", "node_modules");
  const { bins } = hostBinsUnder({});
  for (const [host, file] of Object.entries(bins))
    expect(`${host}: ${file}`).toStartWith(`${host}: ${pinned}${path.sep}`);
});
