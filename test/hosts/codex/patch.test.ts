// docs/contract.md §6.4: the files a Codex apply_patch call touches. The guard checks policy per target, so
// the rows below pin both directions: every header is found (a miss is an unchecked edit), and
// text that is not a header — added lines, text around the markers — is never taken for one.
import { describe, expect, test } from "bun:test";
import { parsePatchTargets } from "../../../src/core/patch.ts";

// Shape of research/payloads/codex/PreToolUse.apply_patch.json (`tool_input.command`), as sent
// by codex-cli 0.169.0.
const CODEX_PATCH = "*** Begin Patch\n*** Add File: patched.txt\n+hello from patch\n*** End Patch";

/** patch(["*** Add File: a", "+x"]) → the lines wrapped in Begin/End markers, joined with LF. */
const patch = (body: readonly string[], eol = "\n"): string => ["*** Begin Patch", ...body, "*** End Patch"].join(eol);

const ROWS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  // The real payload and the three hunk kinds.
  ["the captured Codex payload", CODEX_PATCH, ["patched.txt"]],
  ["Add File", patch(["*** Add File: a.ts", "+x"]), ["a.ts"]],
  ["Update File", patch(["*** Update File: a.ts", "@@", "-x", "+y"]), ["a.ts"]],
  ["Delete File", patch(["*** Delete File: a.ts"]), ["a.ts"]],
  [
    "all three kinds, in order of appearance",
    patch(["*** Delete File: c", "*** Add File: a", "+x", "*** Update File: b", "@@", "-x", "+y"]),
    ["c", "a", "b"],
  ],

  // Move to: a rename writes its destination too.
  [
    "Move to directly after Update adds the destination",
    patch(["*** Update File: old/name.txt", "*** Move to: renamed/dir/name.txt", "@@", "-a", "+b"]),
    ["old/name.txt", "renamed/dir/name.txt"],
  ],
  [
    "Move to indented still counts (a surplus target is the safe side)",
    patch(["*** Update File: a", "   *** Move to: b", "@@", "-x", "+y"]),
    ["a", "b"],
  ],
  ["Move to after a blank line is not a rename", patch(["*** Update File: a", "", "*** Move to: b", "@@"]), ["a"]],
  ["Move to after Add File is not a rename", patch(["*** Add File: a", "*** Move to: b", "+x"]), ["a"]],
  ["Move to after Delete File is not a rename", patch(["*** Delete File: a", "*** Move to: b"]), ["a"]],
  ["Move to with no Update before it is not a target", patch(["*** Move to: b"]), []],
  ["Move to onto the same path is one target", patch(["*** Update File: a", "*** Move to: a", "@@"]), ["a"]],

  // Whitespace: markers and headers padded, paths keep inner spaces and lose trailing ones.
  ["markers padded with spaces and tabs", " \t*** Begin Patch  \n*** Add File: a\n+x\n\t*** End Patch \t", ["a"]],
  ["whole text padded with blank lines", "\n\n  *** Begin Patch\n*** Delete File: a\n*** End Patch\n\n", ["a"]],
  ["header indented", patch(["    *** Update File: a.ts", "@@"]), ["a.ts"]],
  ["trailing spaces and tabs removed from the path", patch(["*** Add File: a.ts  \t", "+x"]), ["a.ts"]],
  ["inner spaces kept", patch(["*** Add File: docs/my notes/read me.md", "+x"]), ["docs/my notes/read me.md"]],
  [
    "space after the colon kept as part of the path, as Codex keeps it",
    patch(["*** Add File:  lead.txt", "+x"]),
    [" lead.txt"],
  ],
  ["header with no path is not a target", patch(["*** Add File: ", "*** Delete File:", "*** Update File:   "]), []],
  ["header without the space after the colon is not a target", patch(["*** Add File:a.ts"]), []],
  [
    "header in another case is not a target (Codex rejects it too)",
    patch(["*** add file: a.ts", "*** UPDATE FILE: b.ts"]),
    [],
  ],

  // Line endings.
  [
    "CRLF line endings",
    patch(["*** Update File: a.ts", "*** Move to: b.ts", "@@", "-x", "+y"], "\r\n"),
    ["a.ts", "b.ts"],
  ],
  ["mixed LF and CRLF", "*** Begin Patch\r\n*** Add File: a\n+x\r\n*** Delete File: b\r\n*** End Patch\n", ["a", "b"]],
  [
    "a lone CR is not a line break",
    "*** Begin Patch\n*** Delete File: a\r*** Delete File: b\n*** End Patch",
    ["a\r*** Delete File: b"],
  ],

  // Paths as written: absolute, relative, Windows; the caller resolves them against cwd.
  ["absolute POSIX path", patch(["*** Update File: /repo/src/a.ts", "@@"]), ["/repo/src/a.ts"]],
  [
    "relative path with dot segments",
    patch(["*** Add File: ../other/b.ts", "+x", "*** Delete File: ./c.ts"]),
    ["../other/b.ts", "./c.ts"],
  ],
  ["Windows path with backslashes", patch(["*** Update File: C:\\repo\\a.ts", "@@"]), ["C:\\repo\\a.ts"]],
  ["non-ASCII path", patch(["*** Add File: données/été.txt", "+x"]), ["données/été.txt"]],

  // Duplicates.
  ["the same path twice is one target", patch(["*** Update File: a", "@@", "*** Update File: a", "@@"]), ["a"]],
  [
    "first appearance keeps its place",
    patch(["*** Add File: b", "+x", "*** Update File: a", "*** Move to: b", "@@"]),
    ["b", "a"],
  ],
  [
    "differently spelled paths stay distinct (resolution is the caller's job)",
    patch(["*** Delete File: a", "*** Delete File: ./a"]),
    ["a", "./a"],
  ],

  // Lines that only look like headers.
  [
    "an added line quoting a header is content",
    patch(["*** Add File: a.md", "+*** Update File: secret.ts", "+x"]),
    ["a.md"],
  ],
  [
    "a removed line quoting a header is content",
    patch(["*** Update File: a.md", "@@", "-*** Delete File: b.ts"]),
    ["a.md"],
  ],
  [
    "a context line quoting a header counts (surplus target, the safe side)",
    patch(["*** Update File: a.md", "@@", " *** Delete File: b.ts", "+x"]),
    ["a.md", "b.ts"],
  ],
  ["End of File marker is not a target", patch(["*** Update File: a", "@@", "+x", "*** End of File"]), ["a"]],

  // Heredoc wrappers (docs/contract.md §6.4): removed, in every quoting.
  ["heredoc <<EOF", `<<EOF\n${patch(["*** Add File: a", "+x"])}\nEOF`, ["a"]],
  ["heredoc <<'EOF'", `<<'EOF'\n${patch(["*** Add File: a", "+x"])}\nEOF\n`, ["a"]],
  ['heredoc <<"EOF"', `<<"EOF"\n${patch(["*** Add File: a", "+x"])}\nEOF`, ["a"]],
  ["heredoc after the command word", `apply_patch <<'EOF'\n${patch(["*** Update File: a", "@@"])}\nEOF`, ["a"]],
  ["heredoc with a space after <<", `apply_patch << 'PATCH'\n${patch(["*** Delete File: a"])}\nPATCH`, ["a"]],
  ["heredoc with CRLF", `<<'EOF'\r\n${patch(["*** Add File: a", "+x"], "\r\n")}\r\nEOF\r\n`, ["a"]],
  ["heredoc without its closing line", `<<'EOF'\n${patch(["*** Add File: a", "+x"])}`, ["a"]],
  ["heredoc around a patch without markers", "<<'EOF'\n*** Add File: a\n+x\nEOF", ["a"]],
  [
    "heredoc inside a longer shell line is bounded by the markers",
    `cd sub && apply_patch <<'EOF'\n${patch(["*** Delete File: a"])}\nEOF`,
    ["a"],
  ],

  // Markers: when present they bound the patch; when missing, headers are still collected.
  ["headers before Begin are ignored", `*** Add File: outside\n${patch(["*** Add File: inside", "+x"])}`, ["inside"]],
  ["headers after End are ignored", `${patch(["*** Add File: inside", "+x"])}\n*** Delete File: outside`, ["inside"]],
  [
    "two patches in one text: first Begin to last End",
    `${patch(["*** Delete File: a"])}\n${patch(["*** Delete File: b"])}`,
    ["a", "b"],
  ],
  [
    "no markers at all: headers still collected",
    "*** Update File: a.ts\n@@\n-x\n+y\n*** Delete File: b.ts",
    ["a.ts", "b.ts"],
  ],
  [
    "Begin without End (truncated): headers after Begin",
    "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b",
    ["a", "b"],
  ],
  ["End without Begin: headers before End", "*** Add File: a\n+x\n*** End Patch\n*** Delete File: b", ["a"]],
  ["End before Begin: nothing between them", "*** End Patch\n*** Add File: a\n*** Begin Patch", []],

  // Nothing parseable: [] and the caller evaluates cwd.
  ["empty string", "", []],
  ["whitespace only", " \n\t\r\n ", []],
  ["markers only", "*** Begin Patch\n*** End Patch", []],
  ["a unified diff is not this grammar", "--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-a\n+b", []],
  ["prose", "please update the file a.ts", []],
  ["NUL bytes around a header", `\u0000${patch(["*** Add File: a\u0000b", "+\u0000"])}\u0000`, ["a\u0000b"]],
];

describe("parsePatchTargets", () => {
  test.each(ROWS)("%s", (_label, command, expected) => {
    expect(parsePatchTargets(command)).toEqual([...expected]);
  });

  test("never throws on values that are not strings at runtime", () => {
    for (const value of [undefined, null, 42, {}, [], ["*** Add File: a"], Symbol("x")]) {
      expect(parsePatchTargets(value as unknown as string)).toEqual([]);
    }
  });

  test("a 20 MB patch with one header per 100 KB is read whole and quickly", () => {
    const filler = `+${"x".repeat(100_000)}`;
    const body: string[] = [];
    for (let index = 0; index < 200; index++) body.push(`*** Add File: f${index}.txt`, filler);
    const started = performance.now();
    const targets = parsePatchTargets(patch(body));
    expect(targets).toHaveLength(200);
    expect(targets[199]).toBe("f199.txt");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("a single 10 MB line with no break (worst case for the heredoc check) returns []", () => {
    expect(parsePatchTargets("a".repeat(10_000_000))).toEqual([]);
    expect(parsePatchTargets(`apply_patch${" ".repeat(5_000_000)}x`)).toEqual([]);
  });
});
