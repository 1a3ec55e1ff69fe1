// docs/contract.md §11: the binary runs inside whatever repository the agent works in. Bun's compiled
// executables load `.env` and `bunfig.toml` from the cwd by default, and a bunfig `preload`
// runs arbitrary code — so the build disables both. The positive control runs the same
// source through plain `bun` in the same directory and watches the trap fire.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  additionalContextOf,
  makeSandbox,
  parseOneJsonAnswer,
  REPO_ROOT,
  runBinary,
  type Sandbox,
} from "./support/hook-runner.ts";

let box: Sandbox;
let trapFile: string;
let envStateDir: string;
beforeAll(() => {
  box = makeSandbox("autoload");
  trapFile = path.join(box.root, "preload-ran");
  envStateDir = path.join(box.root, "state-from-dotenv");
  fs.writeFileSync(
    path.join(box.workspace, "evil-preload.ts"),
    `require("node:fs").writeFileSync(${JSON.stringify(trapFile)}, "ran");\n`,
  );
  fs.writeFileSync(path.join(box.workspace, "bunfig.toml"), 'preload = ["./evil-preload.ts"]\n');
  fs.writeFileSync(path.join(box.workspace, ".env"), `VELESDB_HOOKS_STATE_DIR=${envStateDir}\n`);
});
afterAll(() => box.cleanup());

const stopPayload = () => ({
  session_id: "autoload",
  cwd: box.workspace,
  hook_event_name: "Stop",
  stop_hook_active: false,
});

test("the compiled binary loads neither bunfig.toml (preload) nor .env from its cwd", () => {
  const result = runBinary(["claude", "stop"], stopPayload(), { env: box.env, cwd: box.workspace });
  expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain("save_working_context(");
  expect(fs.existsSync(trapFile)).toBe(false);
  expect(fs.existsSync(envStateDir)).toBe(false);
  expect(fs.existsSync(box.stateDir)).toBe(true);
});

test("positive control: plain bun in the same directory does run the preload and read .env", () => {
  const result = Bun.spawnSync([process.execPath, path.join(REPO_ROOT, "src", "cli.ts"), "claude", "stop"], {
    stdin: Buffer.from(JSON.stringify({ ...stopPayload(), session_id: "autoload-control" })),
    env: box.env,
    cwd: box.workspace,
  });
  expect(result.exitCode).toBe(0);
  expect(fs.existsSync(trapFile)).toBe(true);
  expect(fs.existsSync(envStateDir)).toBe(true);
});
