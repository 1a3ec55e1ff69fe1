// posixCksum names every marker, so it must equal POSIX `cksum` byte for byte (the bash
// reference named the same files with it). The table is written out (docs/performance/2026-12-02-io-floor.md): this
// compares it with the system's `cksum` across the length encodings (0, 1, 2 and 3 length
// bytes) and multi-byte UTF-8.
import { expect, test } from "bun:test";
import { posixCksum } from "../src/core/cksum.ts";

function systemCksum(bytes: Uint8Array): string {
  const [crc, length] = Bun.spawnSync(["cksum"], { stdin: bytes }).stdout.toString().trim().split(/\s+/);
  return `${crc}-${length}`;
}

test("posixCksum equals the system's cksum", () => {
  const inputs = [
    "",
    "a",
    "abc",
    "hostile",
    "session\n/home/dev/repo",
    "é€😀\n/tmp/x",
    "x".repeat(255),
    "y".repeat(256),
    "z".repeat(70_000),
  ];
  for (const text of inputs)
    expect(`${text.length}:${posixCksum(text)}`).toBe(`${text.length}:${systemCksum(new TextEncoder().encode(text))}`);
  const allBytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) & 0xff);
  expect(posixCksum(allBytes)).toBe(systemCksum(allBytes));
  // The known answer, so a broken `cksum` on the machine cannot make both sides agree.
  expect(posixCksum("abc")).toBe("1219131554-3");
});
