// The installer's pure parts, in process: quoting, ownership, and the minimal JSONC edits
// whose round trip (append, then remove) must give back the original bytes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parse } from "jsonc-parser";
import { ownershipOf } from "../src/install/entries/entries.ts";
import {
  addProperty,
  appendToArray,
  detectStyle,
  insertIntoArray,
  removeAt,
  replaceAt,
} from "../src/install/files/jsonc-edit.ts";
import { firstShellWord, posixQuote } from "../src/install/entries/shell-words.ts";

const BINARY = "/home/u/.velesdb-hooks/bin/velesdb-hooks";

describe("POSIX quoting", () => {
  test.each([["plain"], ["with space"], ["it's"], ['"double"'], ["$HOME and `tick` and \\"], ["new\nline"], [""]])(
    "sh reads %j back as one literal word",
    (word) => {
      const run = Bun.spawnSync(["sh", "-c", `printf '%s' ${posixQuote(word)}`]);
      expect(run.stdout.toString()).toBe(word);
    },
  );

  test("firstShellWord(posixQuote(s) + args) === s for any string", () => {
    fc.assert(fc.property(fc.string(), (word) => firstShellWord(`${posixQuote(word)} codex stop`) === word));
  });

  test.each([
    [`"/a b/x" y`, "/a b/x"],
    [`/a\\ b/x y`, "/a b/x"],
    [`'unterminated`, undefined],
    [`   `, undefined],
  ])("firstShellWord(%j) → %j", (command, word) => {
    expect(firstShellWord(command)).toBe(word);
  });
});

describe("ownership", () => {
  test.each([
    ["our exec form", { type: "command", command: BINARY, args: ["claude", "stop"] }, "ours"],
    ["our quoted shell form", { type: "command", command: `'${BINARY}' codex stop` }, "ours"],
    ["our path unquoted", { type: "command", command: `${BINARY} codex stop` }, "ours"],
    [
      "the bash reference (Claude)",
      { type: "command", command: "bash '/Users/you/.claude/hooks/velesdb-memory/stop.sh'" },
      "legacy",
    ],
    [
      "the bash reference (Codex)",
      { type: "command", command: "bash /home/u/.codex/hooks/velesdb-memory/stop.sh" },
      "legacy",
    ],
    [
      "the bash reference, Windows slashes",
      { type: "command", command: "bash C:\\Users\\u\\.claude\\hooks\\velesdb-memory\\stop.sh" },
      "legacy",
    ],
    [
      "the bash reference in exec args",
      { type: "command", command: "bash", args: ["/u/.claude/hooks/velesdb-memory/stop.sh"] },
      "legacy",
    ],
    ["another binary with our name", { type: "command", command: "/opt/velesdb-hooks claude stop" }, "foreign"],
    ["our path as an argument of something else", { type: "command", command: `echo ${BINARY}` }, "foreign"],
    ["a look-alike tree", { type: "command", command: "bash /u/.claude/hooks/velesdb-memory-fork/stop.sh" }, "foreign"],
    ["not an object", "echo", "foreign"],
  ] as const)("%s → %s", (_name, handler, expected) => {
    expect(ownershipOf(handler, BINARY)).toBe(expected);
  });
});

describe("minimal JSONC edits", () => {
  const GROUP = { hooks: [{ type: "command", command: BINARY, args: ["claude", "stop"], timeout: 10 }] };

  test.each([
    ["multi-line", `{\n  "Stop": [\n    {"a": 1}\n  ]\n}\n`],
    ["one line", `{"Stop":[{"a":1}]}`],
    ["one line with spaces", `{ "Stop": [ {"a": 1} ] }`],
    ["trailing comma", `{\n  "Stop": [\n    {"a": 1},\n  ],\n}\n`],
    ["comment after the last element", `{\n  "Stop": [\n    {"a": 1} // keep me\n  ]\n}\n`],
    ["comment before the last element", `{\n  "Stop": [\n    // keep me too\n    {"a": 1}\n  ]\n}\n`],
    ["CRLF and tabs", `{\r\n\t"Stop": [\r\n\t\t{"a": 1}\r\n\t]\r\n}\r\n`],
  ])("append then remove gives back the bytes: %s", (_name, text) => {
    const appended = appendToArray(text, ["Stop"], GROUP, detectStyle(text));
    expect(parse(appended).Stop).toEqual([{ a: 1 }, GROUP]);
    expect(removeAt(appended, ["Stop", 1])).toBe(text);
  });

  test("append then remove is the identity for any array of small values, in any layout", () => {
    const layouts = fc.constantFrom("  ", "    ", "\t", "   ");
    const value = fc.array(
      fc.oneof(
        fc.integer(),
        fc.string({ maxLength: 5 }),
        fc.dictionary(fc.string({ maxLength: 3 }), fc.boolean(), { maxKeys: 2 }),
      ),
      {
        minLength: 1,
        maxLength: 4,
      },
    );
    fc.assert(
      fc.property(value, layouts, fc.boolean(), (items, indent, oneLine) => {
        const text = oneLine ? JSON.stringify({ Stop: items }) : `${JSON.stringify({ Stop: items }, null, indent)}\n`;
        const appended = appendToArray(text, ["Stop"], GROUP, detectStyle(text));
        return removeAt(appended, ["Stop", items.length]) === text;
      }),
    );
  });

  test("insert at any index then remove it is the identity, in any layout (a stale entry replaced where it stands)", () => {
    const layouts = fc.constantFrom("  ", "    ", "\t");
    const items = fc.array(
      fc.oneof(fc.integer(), fc.dictionary(fc.string({ maxLength: 3 }), fc.boolean(), { maxKeys: 2 })),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(items, layouts, fc.boolean(), fc.nat(), (values, indent, oneLine, at) => {
        const text = oneLine ? JSON.stringify({ Stop: values }) : `${JSON.stringify({ Stop: values }, null, indent)}\n`;
        const index = at % (values.length + 1);
        const inserted = insertIntoArray(text, ["Stop"], index, GROUP, detectStyle(text));
        const expected: unknown[] = [...values];
        expected.splice(index, 0, GROUP);
        return (
          JSON.stringify(parse(inserted).Stop) === JSON.stringify(expected) &&
          removeAt(inserted, ["Stop", index]) === text
        );
      }),
    );
  });

  test.each([
    [
      "on its own line, at its indentation",
      `{\n  "Stop": [\n    1,\n    {"old": true},\n    3\n  ]\n}\n`,
      `{\n  "Stop": [\n    1,\n    {\n      "new": 1\n    },\n    3\n  ]\n}\n`,
    ],
    ["inline in a one-line array", `{"Stop":[1,{"old":true},3]}`, `{"Stop":[1,{"new":1},3]}`],
    [
      "a comment beside it stays",
      `[\n  1,\n  {"old": true}, // mine\n  3\n]`,
      `[\n  1,\n  {\n    "new": 1\n  }, // mine\n  3\n]`,
    ],
  ])("replaceAt: %s", (_name, text, expected) => {
    const at = text.startsWith("[") ? [1] : ["Stop", 1];
    expect(replaceAt(text, at, { new: 1 }, detectStyle(text))).toBe(expected);
  });

  test("removing a middle element keeps the comment that follows it", () => {
    const text = `[\n  1,\n  2, // about three\n  3\n]`;
    expect(removeAt(text, [1])).toBe(`[\n  1,\n  // about three\n  3\n]`);
  });

  test("the only property leaves an empty object; a property among others takes only its own bytes", () => {
    expect(removeAt(`{\n  "hooks": {}\n}\n`, ["hooks"])).toBe("{}\n");
    expect(removeAt(`{ "a": 1, "hooks": {}, "b": 2 }`, ["hooks"])).toBe(`{ "a": 1, "b": 2 }`);
  });

  test("a property added to an empty object reads like JSON.stringify's layout", () => {
    const added = addProperty("{}", [], "hooks", { Stop: [GROUP] }, { eol: "\n", indent: "  ", compact: false });
    expect(added).toBe(JSON.stringify({ hooks: { Stop: [GROUP] } }, null, 2));
  });

  test.each([
    ["two spaces", `{\n  "a": 1\n}`, "  "],
    ["three spaces", `{\n   "a": {\n      "b": 1\n   }\n}`, "   "],
    ["tabs", `{\n\t"a": 1\n}`, "\t"],
    ["one line", `{"a":1}`, "  "],
    // docs/decisions.md#installer: one tab line does not outvote the space-indented rest, and vice versa.
    ["two spaces with one stray tab line", `{\n  "a": 1,\n\t"b": 2,\n  "c": {\n    "d": 3\n  }\n}`, "  "],
    ["tabs with one stray space line", `{\n\t"a": 1,\n  "b": 2,\n\t"c": {\n\t\t"d": 3\n\t}\n}`, "\t"],
  ])("indentation detected: %s", (_name, text, indent) => {
    expect(detectStyle(text).indent).toBe(indent);
  });
});
