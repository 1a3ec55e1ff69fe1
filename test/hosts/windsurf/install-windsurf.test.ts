// The Windsurf client of the installer (docs/contract.md §4.3, §9), through the compiled binary in a fake
// home: the flat hooks.json registry and the section of the global rules file. Both belong to
// the user, so every test checks what must stay byte-identical, and each negative sits next to
// the positive control that proves the same setup works.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { windsurfRulesGuidance } from "../../../src/core/texts.ts";
import {
  PLANTED_SECRET,
  RULES_FIXTURES,
  WINDSURF_BASH_REFERENCE,
  WINDSURF_FIXTURES,
} from "../../support/install-fixtures.ts";
import {
  makeInstallSandbox,
  modeOf,
  read,
  treeDigest,
  write,
  type InstallSandbox,
} from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("windsurf", { clients: ["windsurf"] });
});
afterEach(() => box.cleanup());

const EVENTS = ["pre_user_prompt", "pre_write_code", "post_mcp_tool_use"];
const ARGV = ["pre-user-prompt", "pre-write-code", "post-mcp-tool-use"];
const W = ["--client", "windsurf"];

const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Handler = { command?: unknown; show_output?: unknown };
const hooksOf = (file: string): Record<string, Handler[]> => (parseJsonc(read(file)) as { hooks?: never }).hooks ?? {};
const sectionLines = (text: string): string[] => text.split(/\r?\n/).filter((l) => l.startsWith("<!-- velesdb-hooks:"));

describe("entries", () => {
  test("a flat list per event: {command: '<stable path>' windsurf <event>, show_output: false}", () => {
    ok(["install", ...W]);
    const hooks = hooksOf(box.windsurfHooks);
    expect(Object.keys(hooks)).toEqual(EVENTS);
    EVENTS.forEach((event, i) => {
      expect(hooks[event]).toEqual([{ command: `'${box.stableBinary}' windsurf ${ARGV[i]}`, show_output: false }]);
    });
    expect(modeOf(box.windsurfHooks)).toBe(0o600);
  });

  test("a HOME with spaces, quotes and $: the written command, run by sh -c, gives a real answer", () => {
    box.cleanup();
    box = makeInstallSandbox("windsurf-awkward", {
      homeName: `it's a "home" with $HOME and \`tick\``,
      clients: ["windsurf"],
    });
    ok(["install", ...W]);
    const command = String(hooksOf(box.windsurfHooks).pre_user_prompt![0]!.command);
    const payload = JSON.stringify({
      agent_action_name: "pre_user_prompt",
      trajectory_id: "traj-1",
      execution_id: "e1",
      tool_info: { user_prompt: "hi" },
    });
    const repo = path.join(box.root, "repo");
    write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", session: "main" }));
    const run = Bun.spawnSync(["sh", "-c", command], { stdin: Buffer.from(payload), env: box.env, cwd: repo });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toContain('load_working_context(project="atlas", session="main")');
    // Control: the same path without the quoting does not even start the binary.
    const unquoted = Bun.spawnSync(["sh", "-c", `${box.stableBinary} windsurf pre-user-prompt`], {
      stdin: Buffer.from(payload),
      env: box.env,
      cwd: repo,
    });
    expect(unquoted.exitCode).not.toBe(0);
    expect(unquoted.stdout.toString()).not.toContain("load_working_context");
  });

  test("the guard entry refuses through exit 2 in an opted-in repository, and passes elsewhere", () => {
    ok(["install", ...W]);
    const command = String(hooksOf(box.windsurfHooks).pre_write_code![0]!.command);
    const run = (repo: string) =>
      Bun.spawnSync(["sh", "-c", command], {
        stdin: Buffer.from(
          JSON.stringify({ trajectory_id: "t-guard", tool_info: { file_path: path.join(repo, "a.ts") } }),
        ),
        env: box.env,
        cwd: repo,
      });
    const optedIn = path.join(box.root, "opted-in");
    write(path.join(optedIn, ".velesdb-hooks.json"), JSON.stringify({ enforce_learning_loop: true }));
    const plain = path.join(box.root, "plain");
    fs.mkdirSync(plain);
    expect(run(optedIn).exitCode).toBe(2);
    expect(run(plain).exitCode).toBe(0);
  });
});

describe("registry merge: everything that is not ours stays byte-identical", () => {
  test.each(WINDSURF_FIXTURES.map((f) => [f.name, f] as const))("%s", (_name, fixture) => {
    write(box.windsurfHooks, fixture.text);
    ok(["uninstall", ...W]);
    const withoutOurs = read(box.windsurfHooks);
    if (!fixture.hasOurs) expect(withoutOurs).toBe(fixture.text); // control: nothing of ours, nothing changed
    write(box.windsurfHooks, fixture.text);

    ok(["install", ...W]);
    const installed = read(box.windsurfHooks);
    for (const piece of fixture.foreign) expect(installed).toContain(piece);
    expect(installed).not.toContain(".codeium/windsurf/hooks/velesdb-memory/");
    expect(box.run(["check", ...W]).exitCode).toBe(0);

    ok(["uninstall", ...W]);
    expect(read(box.windsurfHooks)).toBe(withoutOurs);
  });

  test("installing over the bash hooks replaces their entry in place and keeps the foreign one beside it", () => {
    write(box.windsurfHooks, WINDSURF_BASH_REFERENCE);
    const run = ok(["install", ...W]);
    expect(run.stdout).toContain("pre_user_prompt (bash hooks)");
    // In place: Cascade runs a list in order, so ours still runs before the user's hook (docs/decisions.md#installer).
    expect(hooksOf(box.windsurfHooks).pre_user_prompt).toEqual([
      { command: `'${box.stableBinary}' windsurf pre-user-prompt`, show_output: false },
      { command: "python3 ~/bin/log-prompt.py", show_output: false },
    ]);
  });

  test("installing twice changes no byte anywhere in the home; uninstall then install gives the same bytes", () => {
    write(box.windsurfHooks, WINDSURF_FIXTURES[0]!.text);
    write(box.windsurfRules, RULES_FIXTURES[0]![1]);
    ok(["install"]);
    const before = treeDigest(box.home);
    const registry = read(box.windsurfHooks);
    const rules = read(box.windsurfRules);
    const second = ok(["install"]);
    expect(treeDigest(box.home)).toBe(before);
    expect(second.stdout).toContain("windsurf: ~/.codeium/windsurf/hooks.json is already in step");
    expect(second.stdout).toContain("rules section is already in step");
    ok(["uninstall"]);
    ok(["install"]);
    expect(read(box.windsurfHooks)).toBe(registry);
    expect(read(box.windsurfRules)).toBe(rules);
  });

  test("an event value that is not a list is refused before anything changes; a list installs", () => {
    write(box.windsurfHooks, '{"hooks": {"pre_write_code": {"command": "x"}}}\n');
    const before = treeDigest(box.root);
    const run = box.run(["install", ...W]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('"hooks.pre_write_code" value that is not a list');
    expect(treeDigest(box.root)).toBe(before);
    write(box.windsurfHooks, '{"hooks": {"pre_write_code": [{"command": "x"}]}}\n');
    ok(["install", ...W]);
  });
});

describe("the rules section", () => {
  test.each(RULES_FIXTURES)("install then uninstall gives back the exact bytes: %s", (_name, original) => {
    write(box.windsurfRules, original, 0o640);
    ok(["install", ...W]);
    const installed = read(box.windsurfRules);
    expect(installed.startsWith(original)).toBe(true);
    expect(installed).toContain(windsurfRulesGuidance().split("\n")[0]!);
    expect(sectionLines(installed)).toHaveLength(2);
    expect(modeOf(box.windsurfRules)).toBe(0o640);
    expect(read(`${box.windsurfRules}.velesdb-backup`)).toBe(original);
    ok(["uninstall", ...W]);
    expect(read(box.windsurfRules)).toBe(original);
  });

  test("separation: one blank line after the user's text, none in an empty file, the file's line ending", () => {
    const begin = (text: string) => text.indexOf("<!-- velesdb-hooks:begin");
    write(box.windsurfRules, "- one\n");
    ok(["install", ...W]);
    expect(read(box.windsurfRules).slice(0, begin(read(box.windsurfRules)))).toBe("- one\n\n");
    write(box.windsurfRules, "- one");
    ok(["install", ...W]);
    expect(read(box.windsurfRules).slice(0, begin(read(box.windsurfRules)))).toBe("- one\n\n");
    write(box.windsurfRules, "- one\r\n");
    ok(["install", ...W]);
    const crlf = read(box.windsurfRules);
    expect(crlf.slice(0, begin(crlf))).toBe("- one\r\n\r\n");
    expect(crlf.replaceAll("\r\n", "")).not.toContain("\n"); // the section uses CRLF too
    write(box.windsurfRules, "");
    ok(["install", ...W]);
    expect(begin(read(box.windsurfRules))).toBe(0);
  });

  test("an absent rules file is created 0600 (and its directory), with no backup; uninstall deletes it again", () => {
    ok(["install", ...W]);
    expect(modeOf(box.windsurfRules)).toBe(0o600);
    expect(read(box.windsurfRules).startsWith("<!-- velesdb-hooks:begin")).toBe(true);
    expect(fs.existsSync(`${box.windsurfRules}.velesdb-backup`)).toBe(false);
    ok(["uninstall", ...W]);
    // Install created it and it holds nothing else: it goes (docs/decisions.md#installer).
    expect(fs.existsSync(box.windsurfRules)).toBe(false);
    // Control: a rules file the user had, even an empty one, stays.
    write(box.windsurfRules, "");
    ok(["install", ...W]);
    ok(["uninstall", ...W]);
    expect(read(box.windsurfRules)).toBe("");
  });

  test("an outdated section is rewritten in place; the user's text before and after it stays", () => {
    write(box.windsurfRules, "before\n");
    ok(["install", ...W]);
    const current = read(box.windsurfRules);
    // An older release wrote other words; the user added a line after the section since.
    const older = `${current.replace(windsurfRulesGuidance().split("\n")[0]!, "An older sentence.")}after\n`;
    write(box.windsurfRules, older);
    const drift = box.run(["check", ...W]);
    expect(drift.exitCode).toBe(1);
    expect(drift.stdout).toContain("windsurf: rules section drifted (~/.codeium/windsurf/memories/global_rules.md)");
    expect(drift.stdout).toContain("repair: velesdb-hooks install --client windsurf");
    const run = ok(["install", ...W]);
    expect(run.stdout).toContain("updated the velesdb-hooks rules section in place");
    expect(read(box.windsurfRules)).toBe(`${current}after\n`);
    expect(box.run(["check", ...W]).exitCode).toBe(0); // control: in step again
    ok(["uninstall", ...W]);
    expect(read(box.windsurfRules)).toBe("before\nafter\n");
  });

  test.each([
    ["a begin marker without its end", (t: string) => t.replace(/<!-- velesdb-hooks:end[^\n]*\n/, "")],
    ["two sections", (t: string) => t + t],
    [
      "the end marker before the begin marker",
      (t: string) => `<!-- velesdb-hooks:end -->\n${t.replace(/<!-- velesdb-hooks:end[^\n]*\n/, "")}`,
    ],
  ])("markers that cannot be trusted (%s) are refused before anything changes", (_name, damage) => {
    ok(["install", ...W]);
    write(box.windsurfRules, damage(read(box.windsurfRules)));
    fs.rmSync(box.windsurfHooks);
    const before = treeDigest(box.root);
    for (const args of [
      ["install", ...W],
      ["uninstall", ...W],
      ["install", "--dry-run", ...W],
    ]) {
      const run = box.run(args);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(/global_rules\.md has \d velesdb-hooks begin marker\(s\) and \d end marker\(s\)/);
      expect(run.stderr).toContain("nothing was changed");
      expect(treeDigest(box.root)).toBe(before); // the registry was not written either
    }
    const check = box.run(["check", ...W]);
    expect(check.exitCode).toBe(1);
    expect(check.stdout).toContain("windsurf: rules section cannot be checked");
    // Control: without the damaged file the same install goes through.
    fs.rmSync(box.windsurfRules);
    ok(["install", ...W]);
  });
});

describe("symlinks", () => {
  test("a linked registry and a linked rules file are written at their targets; the links stay links", () => {
    const dotfiles = path.join(box.root, "dotfiles");
    write(path.join(dotfiles, "hooks.json"), "{}\n", 0o640);
    write(path.join(dotfiles, "rules.md"), "- mine\n", 0o644);
    fs.mkdirSync(path.dirname(box.windsurfRules), { recursive: true });
    fs.symlinkSync(path.join(dotfiles, "hooks.json"), box.windsurfHooks);
    fs.symlinkSync(path.join(dotfiles, "rules.md"), box.windsurfRules);
    const run = ok(["install", ...W]);
    expect(run.stdout).toContain("the link's target");
    for (const link of [box.windsurfHooks, box.windsurfRules]) expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(Object.keys(hooksOf(path.join(dotfiles, "hooks.json")))).toEqual(EVENTS);
    expect(read(path.join(dotfiles, "rules.md"))).toContain("<!-- velesdb-hooks:begin");
    expect(modeOf(path.join(dotfiles, "rules.md"))).toBe(0o644);
    ok(["uninstall", ...W]);
    expect(read(path.join(dotfiles, "rules.md"))).toBe("- mine\n");
  });

  test.each([
    [
      "a broken link as the rules file",
      (b: InstallSandbox) => fs.symlinkSync(path.join(b.root, "missing.md"), b.windsurfRules),
      /symlink to a file that does not exist/,
    ],
    [
      "a directory as the rules file",
      (b: InstallSandbox) => fs.mkdirSync(b.windsurfRules),
      /global_rules\.md is a directory/,
    ],
    [
      "a broken link as the registry",
      (b: InstallSandbox) => fs.symlinkSync(path.join(b.root, "missing.json"), b.windsurfHooks),
      /hooks\.json is a symlink to a file that does not exist/,
    ],
  ])("refused before any change: %s", (_name, setup, reason) => {
    fs.mkdirSync(path.dirname(box.windsurfRules), { recursive: true });
    setup(box);
    const before = treeDigest(box.root);
    const run = box.run(["install", ...W]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(reason);
    expect(treeDigest(box.root)).toBe(before);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
    fs.rmSync(box.windsurfRules, { recursive: true, force: true });
    fs.rmSync(box.windsurfHooks, { recursive: true, force: true });
    ok(["install", ...W]); // control
  });
});

describe("--dry-run", () => {
  test.each([
    [
      "install over the bash hooks and user rules",
      () => {
        write(box.windsurfHooks, WINDSURF_BASH_REFERENCE);
        write(box.windsurfRules, "- mine\n");
      },
      ["install", "--dry-run", ...W],
      /would remove pre_user_prompt \(bash hooks\)[\s\S]*would add the velesdb-hooks rules section/,
    ],
    ["install on an empty home", () => {}, ["install", "--dry-run", ...W], /would create it \(mode 600\)/],
    [
      "uninstall after install",
      () => ok(["install", ...W]),
      ["uninstall", "--dry-run", ...W],
      /would remove the velesdb-hooks rules section/,
    ],
  ] as const)("%s writes nothing and lists what it would do", (_name, setup, args, listed) => {
    setup();
    const before = treeDigest(box.home);
    const run = ok([...args]);
    expect(treeDigest(box.home)).toBe(before);
    expect(run.stdout).toContain("dry run: nothing is written");
    expect(run.stdout).toMatch(listed);
    ok(args.filter((a) => a !== "--dry-run")); // control: without --dry-run the home changes
    expect(treeDigest(box.home)).not.toBe(before);
  });
});

describe("check", () => {
  test("absent → exit 0, or 1 with --strict", () => {
    const plain = box.run(["check", ...W]);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toContain("windsurf: entries absent (~/.codeium/windsurf/hooks.json, no such file)");
    expect(plain.stdout).toContain(
      "windsurf: rules section absent (~/.codeium/windsurf/memories/global_rules.md, no such file)",
    );
    const strict = box.run(["check", "--strict", ...W]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("repair: velesdb-hooks install --client windsurf");
  });

  test("in step → exit 0, also with --strict", () => {
    ok(["install", ...W]);
    const run = box.run(["check", "--strict", ...W]);
    expect(run.exitCode).toBe(0);
    for (const line of ["windsurf: entries in step", "windsurf: rules section in step", "windsurf: binary in step"])
      expect(run.stdout).toContain(line);
  });

  const edit = (b: InstallSandbox, change: (hooks: Record<string, Handler[]>) => void) => {
    const value = JSON.parse(read(b.windsurfHooks));
    change(value.hooks);
    write(b.windsurfHooks, JSON.stringify(value, null, 2));
  };
  test.each([
    [
      "show_output turned on",
      (b: InstallSandbox) => edit(b, (h) => (h.pre_write_code![0]!.show_output = true)),
      /windsurf: entries drifted .*pre_write_code differs/,
    ],
    [
      "an event removed",
      (b: InstallSandbox) => edit(b, (h) => delete h.post_mcp_tool_use),
      /post_mcp_tool_use missing/,
    ],
    [
      "a bash entry left behind",
      (b: InstallSandbox) =>
        edit(
          b,
          (h) =>
            (h.pre_user_prompt![0] = { command: "bash /x/.codeium/windsurf/hooks/velesdb-memory/pre-user-prompt.sh" }),
        ),
      /pre_user_prompt still runs the bash hooks/,
    ],
    [
      "the rules section removed, entries kept",
      (b: InstallSandbox) => write(b.windsurfRules, ""),
      /windsurf: rules section absent/,
    ],
    [
      "the entries removed, rules section kept",
      (b: InstallSandbox) => write(b.windsurfHooks, "{}\n"),
      /windsurf: entries absent[\s\S]*windsurf: rules section in step/,
    ],
  ])("drifted → exit 1 with a repair: %s", (_name, drift, reported) => {
    ok(["install", ...W]);
    expect(box.run(["check", ...W]).exitCode).toBe(0); // control
    drift(box);
    const run = box.run(["check", ...W]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(reported);
    expect(run.stdout).toContain("repair: velesdb-hooks install --client windsurf");
    ok(["install", ...W]);
    expect(box.run(["check", ...W]).exitCode).toBe(0); // install repairs it
  });
});

describe("doctor", () => {
  test("each entry's state and the rules section's state", () => {
    const none = ok(["doctor", ...W]).stdout;
    expect(none).toContain("windsurf:  entries absent");
    expect(none).toContain("windsurf:  rules section absent");
    ok(["install", ...W]);
    write(box.windsurfRules, read(box.windsurfRules).replace("velesdb-memory keeps", "velesdb-memory kept"));
    const screen = ok(["doctor", ...W]).stdout;
    for (const event of EVENTS) expect(screen).toContain(`windsurf:    ${event} in step`);
    expect(screen).toContain("windsurf:  rules section drifted");
  });
});

describe("detection and selection", () => {
  test("install without --client picks Windsurf when ~/.codeium/windsurf exists, and not otherwise", () => {
    const run = ok(["install"]);
    expect(run.stdout).toContain("windsurf:");
    expect(fs.existsSync(box.windsurfHooks)).toBe(true);
    box.cleanup();
    box = makeInstallSandbox("windsurf-none", { clients: ["claude"] });
    const other = ok(["install"]);
    expect(other.stdout).not.toContain("windsurf:");
    expect(fs.existsSync(path.join(box.home, ".codeium"))).toBe(false);
  });

  test("uninstall of Windsurf keeps the binary another client uses, and removes it once none does", () => {
    box.cleanup();
    box = makeInstallSandbox("windsurf-shared", { clients: ["windsurf", "claude"] });
    ok(["install"]);
    expect(ok(["uninstall", ...W]).stdout).toContain("kept");
    expect(fs.existsSync(box.stableBinary)).toBe(true);
    ok(["uninstall", "--client", "claude"]);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });
});

describe("the files' content never appears in any output", () => {
  test("install, dry run, check, doctor, uninstall and refusals stay silent about it", () => {
    write(
      box.windsurfHooks,
      `{ "hooks": { "pre_user_prompt": [ { "command": "curl -H 'Authorization: ${PLANTED_SECRET}' x" } ] } }\n`,
    );
    write(box.windsurfRules, `- the deploy token is ${PLANTED_SECRET}\n`);
    const outputs: string[] = [];
    for (const args of [
      ["install", "--dry-run"],
      ["install"],
      ["check"],
      ["doctor"],
      ["uninstall", "--dry-run"],
      ["uninstall"],
    ]) {
      const run = box.run([...args, ...W]);
      outputs.push(run.stdout, run.stderr);
    }
    // Refusals right next to the secret: a registry that does not parse, markers out of order.
    write(box.windsurfHooks, `{ "token": "${PLANTED_SECRET}" "hooks": {} }`);
    for (const args of [["install"], ["check"], ["doctor"]])
      outputs.push(...Object.values(box.run([...args, ...W])).map(String));
    write(box.windsurfHooks, "{}\n");
    write(box.windsurfRules, `<!-- velesdb-hooks:begin ${PLANTED_SECRET} -->\n`);
    for (const args of [["install"], ["check"], ["doctor"]])
      outputs.push(...Object.values(box.run([...args, ...W])).map(String));
    const all = outputs.join("\n");
    expect(all).toContain("does not parse"); // control: the refusals did happen
    expect(all).toContain("begin marker(s)");
    expect(all).not.toContain(PLANTED_SECRET);
    expect(all).not.toContain("PLANTED");
  });
});
