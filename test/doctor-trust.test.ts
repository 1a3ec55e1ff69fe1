// Codex trust hashes, pinned to what codex-cli 0.169.0 itself reported through
// `codex app-server` → hooks/list (currentHash) for these exact entries. If Codex changes how
// it hashes, these rows fail before doctor starts telling users the wrong thing.
import { describe, expect, test } from "bun:test";
import { groupFor } from "../src/install/client.ts";
import { codex } from "../src/install/clients/codex.ts";
import { eventLabel, trustHash, trustKey } from "../src/install/clients/codex-trust.ts";

const PLAIN = "/home/user/.velesdb-hooks/bin/velesdb-hooks";
const AWKWARD = `/home/o'brien $HOME "q"/.velesdb-hooks/bin/velesdb-hooks`;

// Measured on codex-cli 0.169.0 (hooks/list, currentHash); PostToolUse re-measured when its matcher gained Bash.
const MEASURED: ReadonlyArray<readonly [string, string, string]> = [
  [PLAIN, "SessionStart", "7bee1d0302eb5c9cf2279cab6085e7f1f45ae97ba92dbfba3dcce7c4df079555"],
  [PLAIN, "Stop", "b3b1d28e616aa8c4d8201dcb8372e2af1e77712f41aa5e9a872a49b6871ad796"],
  [PLAIN, "PreToolUse", "72545f89f917ff1c090acc3c61ef716be485ab642271e96d35e985a45259760d"],
  [PLAIN, "PostToolUse", "390508fcfdaca6393b02f074096ff53f4d454384c43f9f9d3865d52e7bc580c8"],
  [AWKWARD, "SessionStart", "d8f4eb2eb3f75163d110bb444aa0c1bbbcdc25e7fe81a22036ff4bc58b54c91a"],
  [AWKWARD, "Stop", "daf1a8e90a38021bd8b92c654a920b2d8e79e62eaf7a94b653e37641a462453b"],
  [AWKWARD, "PreToolUse", "c7879d1682a08fffae98bcbaea0531ca6b83df55ff624730e41d5621297fd0c1"],
  [AWKWARD, "PostToolUse", "899845a4d6e98a8e0aded0a6108174bd4bcd00ff22ec0d9305350ba865058bab"],
];

describe("trust hash of our own entries", () => {
  test.each(MEASURED)("%s %s", (binary, event, hex) => {
    const row = codex.registry.rows.find((r) => r.wireEvent === event)!;
    const group = groupFor(row, codex.registry.handler(row, binary, "linux"));
    const handler = (group.hooks as Record<string, unknown>[])[0]!;
    expect(trustHash(event, group.matcher, handler, "linux")).toBe(`sha256:${hex}`);
  });
});

describe("trust hash rules measured on foreign-shaped entries", () => {
  test.each([
    // Stop drops its matcher; a handler without timeout hashes with 600.
    [
      "Stop ignores its matcher",
      "Stop",
      "ignored",
      { type: "command", command: "/bin/true", timeout: 10 },
      "3c75cb092e3950863ad8058f4bb30d306cedb26dfb7b5eb217733b2635579c77",
    ],
    [
      "default timeout 600",
      "PreToolUse",
      "^(apply_patch|Edit|Write)$",
      { type: "command", command: "/bin/true" },
      "38f8a152025f06ff836fd79e2ef6437f8101acbef037a7ff9e3cfb12ed47e554",
    ],
    [
      "commandWindows is not hashed off Windows",
      "SessionStart",
      undefined,
      { type: "command", command: "/bin/true", timeout: 10, commandWindows: '& "C:\\x.exe" codex session-start' },
      "dd5cdcb116994ce9a098a641cdd7d83bd23144aec16f1762761251873c7b53dc",
    ],
    [
      "a config.toml entry",
      "PreToolUse",
      "x",
      { type: "command", command: "/bin/echo hi" },
      "a1d95bad6654e01819813d704d9b0a389cb3e46868ca4132eeb984ac0ed91f29",
    ],
  ] as const)("%s", (_name, event, matcher, handler, hex) => {
    expect(trustHash(event, matcher, handler, "linux")).toBe(`sha256:${hex}`);
  });

  test("keys spell the event in snake case with group and handler indexes", () => {
    expect(eventLabel("PreToolUse")).toBe("pre_tool_use");
    expect(eventLabel("SessionStart")).toBe("session_start");
    expect(trustKey("/h/.codex/hooks.json", "Stop", 2, 1)).toBe("/h/.codex/hooks.json:stop:2:1");
  });
});
