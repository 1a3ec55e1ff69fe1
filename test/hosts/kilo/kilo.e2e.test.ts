// Kilo Code end to end (the platform binary @kilocode/cli-linux-x64 7.7.7, run directly): the
// plugin-host suite (test/e2e/plugin-host.ts) on Kilo's directories (~/.config/kilo, kilo.json)
// and switches, plus what only Kilo needs proving: a user who has our Claude Code hooks as well
// never gets them run by Kilo (src/hosts/kilo.ts says what the binary holds).
import { describe, expect, test } from "bun:test";
import { runInstaller, spiedRuns, spyOnInstalledHooks } from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import * as path from "node:path";
import { pluginHostSuite } from "../../e2e/plugin-host.ts";

const runs = pluginHostSuite({
  name: "kilo",
  bin: HOST_BINS.kilo,
  configFile: "kilo.json",
  pluginPackage: ["@kilocode/plugin", "7.7.7"],
  // Measured: without these Kilo reaches for us.i.posthog.com (telemetry, on unless
  // KILO_TELEMETRY_LEVEL says otherwise) and api.kilo.ai/api/openrouter/models (its own gateway's
  // model list, fetched unless the `kilo` provider is disabled).
  env: { KILO_DISABLE_MODELS_FETCH: "1", KILO_TELEMETRY_LEVEL: "off" },
  config: { disabled_providers: ["kilo"] },
  // Our Claude Code hooks in the same home, in both modes, and a spy on the binary they share
  // with the plugin: every run of it, by either agent, leaves its argv.
  afterSetup(c) {
    runInstaller(c, "claude", "install");
    spyOnInstalledHooks(c.home);
  },
});

const spied = (home: string) => spiedRuns(path.join(home, ".velesdb-hooks", "spy")).map((run) => run.argv.join(" "));

describe("kilo and Claude Code's hooks", () => {
  test("Kilo never runs the user's Claude Code hooks: every run of the binary is the plugin's (without the plugin, none at all)", async () => {
    const { on, off } = await runs.sessionPair();
    const withPlugin = spied(on.case.home);
    // The spy sees the plugin's runs, so it would see a Claude hook's.
    expect(withPlugin.filter((argv) => argv.startsWith("kilo "))).toContain("kilo session-start");
    expect(withPlugin.filter((argv) => !argv.startsWith("kilo "))).toEqual([]);
    expect(spied(off.case.home)).toEqual([]);
  }, 300_000);
});
