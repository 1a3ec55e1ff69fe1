// Planning a registry's edit is a pure function of its bytes (src/install/steps/plan-entries.ts), and so
// is each file's whole change as install and uninstall report it (src/install/steps/plan-changes.ts):
// these cases plan install and uninstall for the clients' real specs from text alone, with
// every file-system call of the process made to throw while they run — a plan that reached for
// the disk would fail here. The control proves the trap works: reading a file under it throws.
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { parse } from "jsonc-parser";
import { clientNamed } from "../src/install/clients/index.ts";
import type { RegistryClient } from "../src/install/client.ts";
import { planEntries, type EntriesWanted } from "../src/install/steps/plan-entries.ts";
import { planRegistryChange, planSectionChange } from "../src/install/steps/plan-changes.ts";
import type { Manifest, ManifestRecord } from "../src/install/steps/manifest.ts";
import type { InstallerContext } from "../src/install/paths.ts";

const BINARY = "/home/u/.velesdb-hooks/bin/velesdb-hooks";
const claude = clientNamed("claude") as RegistryClient;
const copilot = clientNamed("copilot") as RegistryClient;
const windsurf = clientNamed("windsurf");

// A user's settings.json as Claude Code keeps it, with a comment, their own hook and other keys.
const USER_SETTINGS = `{
  // my model
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "~/bin/audit-bash" }] }
    ]
  },
  "permissions": { "allow": ["Bash(ls:*)"] }
}
`;

const FS_CALLS = [
  "readFileSync",
  "openSync",
  "statSync",
  "lstatSync",
  "existsSync",
  "readdirSync",
  "realpathSync",
  "writeFileSync",
  "renameSync",
  "mkdirSync",
  "rmSync",
] as const;
let spies: Array<{ mockRestore(): void }> = [];
beforeEach(() => {
  spies = FS_CALLS.map((name) =>
    spyOn(fs, name).mockImplementation(() => {
      throw new Error(`planning touched the file system: fs.${name}`);
    }),
  );
});
afterEach(() => {
  for (const spy of spies) spy.mockRestore();
});

const plan = (wanted: Partial<EntriesWanted> & Pick<EntriesWanted, "text">) => {
  const result = planEntries({
    registry: claude.registry,
    binaryPath: BINARY,
    platform: "linux",
    mode: "install",
    ...wanted,
  });
  if (!result.ok) throw new Error(result.problem);
  return result.plan;
};

describe("planning from bytes, with the file system off limits", () => {
  test("control: under the trap, a read of a file throws", () => {
    expect(() => fs.readFileSync(import.meta.path, "utf8")).toThrow(
      "planning touched the file system: fs.readFileSync",
    );
  });

  test("install into a user's settings adds every row, keeps their hook, comment and keys, and is then in step", () => {
    const installed = plan({ text: USER_SETTINGS });
    expect(installed.additions.map((row) => row.wireEvent)).toEqual(claude.registry.rows.map((row) => row.wireEvent));
    expect(installed.removals).toEqual([]);
    expect(installed.text).toContain("// my model");
    expect(installed.text).toContain('"command": "~/bin/audit-bash"');
    const value = parse(installed.text);
    expect(value.model).toBe("opus");
    expect(value.permissions).toEqual({ allow: ["Bash(ls:*)"] });
    expect(value.hooks.PreToolUse[0]).toEqual({
      matcher: "Bash",
      hooks: [{ type: "command", command: "~/bin/audit-bash" }],
    });
    for (const row of claude.registry.rows) expect(JSON.stringify(value.hooks[row.wireEvent])).toContain(BINARY);
    // Only the events install created are its containers; PreToolUse was the user's.
    expect(installed.added).not.toContainEqual(["hooks"]);
    const again = plan({ text: installed.text });
    expect(again.text).toBe(installed.text);
    expect(again.additions).toEqual([]);
  });

  test("uninstall of what install added gives back the user's bytes exactly", () => {
    const installed = plan({ text: USER_SETTINGS });
    const removed = plan({
      text: installed.text,
      mode: "uninstall",
      record: { created: false, added: installed.added },
    });
    expect(removed.text).toBe(USER_SETTINGS);
    expect(removed.deleteFile).toBe(false);
  });

  test("a new file (no bytes) starts from the skeleton; uninstall of the file install created deletes it", () => {
    const created = plan({ text: null });
    expect(created.text.endsWith("\n")).toBe(true);
    expect(Object.keys(parse(created.text).hooks).sort()).toEqual(
      claude.registry.rows.map((row) => row.wireEvent).sort(),
    );
    const removed = plan({ text: created.text, mode: "uninstall", record: { created: true, added: created.added } });
    expect(removed.deleteFile).toBe(true);
  });

  test("a stale entry of ours is replaced where it stands, ahead of a user's hook after it", () => {
    const row = copilot.registry.rows[0]!;
    const stale = { type: "command", bash: `${BINARY} copilot old-event`, timeoutSec: 1 };
    const users = { type: "command", bash: "~/bin/after" };
    const text = `${JSON.stringify({ version: 1, hooks: { [row.wireEvent]: [stale, users] } }, null, 2)}\n`;
    const replaced = plan({ text, registry: copilot.registry });
    const list = parse(replaced.text).hooks[row.wireEvent];
    expect(list).toHaveLength(2);
    expect(list[0]).not.toEqual(stale);
    expect(JSON.stringify(list[0])).toContain(BINARY);
    expect(list[1]).toEqual(users);
    expect(replaced.removals.map((entry) => entry.event)).toContain(row.wireEvent);
  });

  test("bytes that cannot be merged are refused with the reason, as readRegistry refuses them", () => {
    const refused = (text: string) => {
      const result = planEntries({
        text,
        registry: claude.registry,
        binaryPath: BINARY,
        platform: "linux",
        mode: "install",
      });
      return result.ok ? "planned" : result.problem;
    };
    expect(refused('{ "hooks": ')).toMatch(/^does not parse: line 1, column \d+/);
    expect(refused("[]")).toBe("is not a JSON object");
    expect(refused('{ "hooks": {}, "hooks": {} }')).toMatch(/^has "hooks" twice \(again on line 1\)/);
    expect(refused('{ "hooks": [] }')).toBe('has a "hooks" value that is not an object');
    expect(refused('{ "hooks": { "Stop": {} } }')).toBe('has a "hooks.Stop" value that is not a list');
    // Positive control: the same shape with a list plans.
    expect(refused('{ "hooks": { "Stop": [] } }')).toBe("planned");
  });
});

describe("each file's change from its bytes, with the file system off limits", () => {
  const ctx: InstallerContext = { env: {}, home: "/home/u", platform: "linux", cwd: "/home/u" };
  const owner = { uid: 1000, gid: 1000 };
  const registryPath = "/home/u/.claude/settings.json";
  const manifest = (records: readonly ManifestRecord[]): Manifest => ({
    ok: true,
    path: "/home/u/.velesdb-hooks/installed.json",
    records,
    text: undefined,
  });
  const registryChange = (text: string, mode: "install" | "uninstall", records: readonly ManifestRecord[] = []) => {
    const notes: string[] = [];
    const planned = planRegistryChange({
      ctx,
      client: claude,
      registry: claude.registry,
      registryPath,
      file: {
        kind: "present",
        path: registryPath,
        target: registryPath,
        linked: false,
        text,
        mode: 0o600,
        owner,
        hooks: parse(text).hooks,
      },
      stable: BINARY,
      manifest: manifest(records),
      mode,
      sharedMcp: undefined,
      notes,
    });
    if (!planned.ok) throw new Error(planned.problem);
    return { ...planned, notes };
  };

  test("install into a user's settings: the new text, both tenses of what it adds, the record, the hooks after", () => {
    const { change, hooksAfter, notes } = registryChange(USER_SETTINGS, "install");
    expect(change.text).toContain("// my model");
    expect(change.text).toContain(BINARY);
    expect(change.parts).toHaveLength(1);
    expect(change.parts[0]![0]).toStartWith("added ");
    expect(change.parts[0]![1]).toStartWith("add ");
    expect(change.record).toMatchObject({ client: "claude", path: registryPath, created: false });
    expect(Object.keys(hooksAfter as object)).toContain("PreToolUse");
    expect(notes).toEqual([]);
  });

  test("uninstall with install's record gives back the user's bytes and forgets the file", () => {
    const installed = registryChange(USER_SETTINGS, "install").change;
    const removed = registryChange(installed.text!, "uninstall", [installed.record!]).change;
    expect(removed.text).toBe(USER_SETTINGS);
    expect(removed.parts[0]![0]).toStartWith("removed ");
    expect(removed.record).toBeUndefined();
  });

  test("a section in a file that does not exist yet: created, added, remembered as created", () => {
    const section = windsurf.sections![0]!;
    const rulesPath = "/home/u/.codeium/windsurf/memories/global_rules.md";
    const planned = planSectionChange({
      ctx,
      client: windsurf,
      section,
      file: { kind: "absent", path: rulesPath, target: rulesPath, owner },
      stable: BINARY,
      manifest: manifest([]),
      mode: "install",
    });
    if (!planned.ok) throw new Error(planned.problem);
    expect(planned.change.text).toStartWith("<!-- velesdb-hooks:begin");
    expect(planned.change.parts).toEqual([
      [`added the velesdb-hooks ${section.label}`, `add the velesdb-hooks ${section.label}`],
    ]);
    expect(planned.change.record).toEqual({ client: "windsurf", path: rulesPath, created: true, added: [] });
  });
});
