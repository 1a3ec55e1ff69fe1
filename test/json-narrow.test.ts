// The stand-in edit of a large JSON file (src/install/files/json-narrow.ts, docs/hardening.md §8) against
// the edit it replaces: the same minimal edit made on the whole file's syntax tree. For every
// file below — JSONC comments and trailing commas, a BOM, CRLF, strings holding braces, quotes
// and escapes, the servers table at the top and under projects.<cwd> — the two must give the
// same bytes, and uninstall's removal must give the file back. (One known difference, kept: the
// indentation unit of an inserted entry is judged from the stand-in's lines, so a file whose
// smallest indentation occurs only inside a stood-in value gets its dominant unit instead.)
import { describe, expect, test } from "bun:test";
import { narrowJsonc, widen } from "../src/install/files/json-narrow.ts";
import { addProperty, detectStyle, removeAt } from "../src/install/files/jsonc-edit.ts";
import { parseJsonc } from "../src/install/files/jsonc-parse.ts";

const ENTRY = { type: "stdio", command: "/home/u/bin/velesdb-memory", args: [], env: {} };
const CWD = "/home/u/src/app";

const FILES: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  [
    "strict JSON, servers at the top",
    `{\n  "numStartups": 3,\n  "projects": {\n    "/a": { "history": [{ "display": "x {y} \\"z\\" \\\\", "pastedContents": {} }] }\n  },\n  "mcpServers": {\n    "other": { "command": "o" }\n  }\n}`,
    ["mcpServers"],
  ],
  [
    "JSONC with comments and a trailing comma",
    `{\n  // mine\n  "theme": "dark", /* a { brace */\n  "mcpServers": {\n    "other": { "command": "o" }, // keep\n  },\n  "tail": [1, 2, 3,],\n}\n`,
    ["mcpServers"],
  ],
  [
    "a BOM and CRLF",
    `\uFEFF{\r\n  "a": {\r\n    "b": [1,\r\n      2]\r\n  },\r\n  "mcpServers": {}\r\n}\r\n`,
    ["mcpServers"],
  ],
  [
    "no servers table yet",
    `{\n  "projects": {\n    "/a": { "x": "}]\\"" }\n  },\n  "userID": "abc"\n}`,
    ["mcpServers"],
  ],
  [
    "local scope, under projects.<cwd>",
    `{\n  "projects": {\n    "/other": { "mcpServers": { "o": {} }, "history": [] },\n    ${JSON.stringify(CWD)}: {\n      "history": [{ "display": "hi" }],\n      "mcpServers": {}\n    }\n  }\n}`,
    ["projects", CWD, "mcpServers"],
  ],
  ["tabs", `{\n\t"x": {\n\t\t"y": 1\n\t},\n\t"mcpServers": {\n\t\t"o": {}\n\t}\n}\n`, ["mcpServers"]],
];

describe("the stand-in edit gives the bytes the whole-file edit gives", () => {
  test.each(FILES)("%s", (_label, file, keys) => {
    const bom = file.startsWith("\uFEFF") ? "\uFEFF" : "";
    const body = file.slice(bom.length);
    const tables = [keys];
    const narrowed = narrowJsonc(file, tables);
    if (!narrowed.ok) throw new Error(`does not narrow: ${narrowed.code}`);
    expect(narrowed.narrowed.text.length).toBeLessThanOrEqual(file.length);
    // Line numbers are kept: the stand-in has exactly the file's line breaks.
    expect(narrowed.narrowed.text.split("\n").length).toBe(file.split("\n").length);
    const standIn = narrowed.narrowed.text.slice(bom.length);
    const tableThere =
      parseJsonc(body).ok && JSON.stringify(keys) !== JSON.stringify(["mcpServers"]) ? true : /"mcpServers"/.test(body);
    const add = (text: string) =>
      tableThere
        ? addProperty(text, [...keys], "velesdb-memory", ENTRY, detectStyle(text))
        : addProperty(text, [], "mcpServers", { "velesdb-memory": ENTRY }, detectStyle(text));
    const whole = bom + add(body);
    const viaStandIn = widen(file, narrowed.narrowed, bom + add(standIn), tables);
    expect(viaStandIn).toBe(whole);
    // And back: removing our entry from the result, through its own stand-in, gives the file again when the table was there.
    if (tableThere) {
      const again = narrowJsonc(whole, tables);
      if (!again.ok) throw new Error("the result does not narrow");
      const removed = widen(
        whole,
        again.narrowed,
        bom + removeAt(again.narrowed.text.slice(bom.length), [...keys, "velesdb-memory"]),
        tables,
      );
      expect(removed).toBe(file);
    }
  });

  test("an edit that would touch a stood-in value is refused (undefined), never written", () => {
    const file = `{\n  "projects": { "/a": 1 },\n  "mcpServers": {}\n}`;
    const narrowed = narrowJsonc(file, [["mcpServers"]]);
    if (!narrowed.ok) throw new Error("does not narrow");
    const touched = narrowed.narrowed.text.replace('"projects": 0', '"projects": 1');
    expect(touched).not.toBe(narrowed.narrowed.text);
    expect(widen(file, narrowed.narrowed, touched, [["mcpServers"]])).toBeUndefined();
  });

  test("a file that does not parse is reported as parseJsonc reports it, line and column of the whole file", () => {
    const file = `{\n  "projects": { "/a": [1, 2 3] },\n  "mcpServers": {}\n}`;
    const narrowed = narrowJsonc(file, [["mcpServers"]]);
    const whole = parseJsonc(file);
    expect(narrowed.ok).toBe(false);
    expect(whole.ok).toBe(false);
    if (!narrowed.ok && !whole.ok)
      expect({ line: narrowed.line, column: narrowed.column, code: narrowed.code }).toEqual({
        line: whole.line,
        column: whole.column,
        code: whole.code,
      });
  });

  test("nesting too deep off the servers' path is still refused, as before", () => {
    const file = `{"a":${"[".repeat(600)}${"]".repeat(600)},"mcpServers":{}}`;
    const narrowed = narrowJsonc(file, [["mcpServers"]]);
    expect(narrowed.ok).toBe(false);
    if (!narrowed.ok) expect(narrowed.code).toContain("nested deeper than");
  });
});
