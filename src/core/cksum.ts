// POSIX `cksum` (CRC-32/CKSUM over the bytes, then over the length in as few bytes as it
// takes). Marker names are `<kind>-<crc>-<length>.marker` so that the bash reference, which
// ran `printf '%s' "$id" | cksum`, and this binary name the same file for the same identity:
// a user who swaps one for the other mid-session loses no marker.
//
// Four bits at a time from a written-out table, in plain indexed loops: building the usual
// 256-entry table (2 048 loop turns) and feeding bytes through a closure in a for-of made the
// engine JIT-compile both in every hook that names a marker, ~1 ms of a ~10 ms hook (measured
// with BUN_JSC_reportCompileTimes=1, docs/performance/2026-12-02-io-floor.md). A hook hashes a few
// short identities; this
// stays under the engine's compile thresholds.

/** CKSUM_NIBBLE_TABLE[n]: the CRC register after shifting the nibble n (as n << 28) through the polynomial 0x04c11db7 four times. */
const CKSUM_NIBBLE_TABLE = [
  0x00000000, 0x04c11db7, 0x09823b6e, 0x0d4326d9, 0x130476dc, 0x17c56b6b, 0x1a864db2, 0x1e475005, 0x2608edb8,
  0x22c9f00f, 0x2f8ad6d6, 0x2b4bcb61, 0x350c9b64, 0x31cd86d3, 0x3c8ea00a, 0x384fbdbd,
];

/** posixCksum("abc") === "1219131554-3": the CRC and the byte length, as `cksum` prints them. */
export function posixCksum(identity: string | Uint8Array): string {
  const bytes = typeof identity === "string" ? new TextEncoder().encode(identity) : identity;
  // The bytes, then the length's bytes (least significant first, as few as it takes); the
  // update is written inline: a helper called per byte would itself cross the JIT threshold.
  const lengthBytes: number[] = [];
  for (let n = bytes.length; n > 0; n = Math.floor(n / 256)) lengthBytes.push(n & 0xff);
  const total = bytes.length + lengthBytes.length;
  let crc = 0;
  for (let i = 0; i < total; i++) {
    const byte = i < bytes.length ? bytes[i]! : lengthBytes[i - bytes.length]!;
    crc = ((crc << 4) ^ CKSUM_NIBBLE_TABLE[(crc >>> 28) ^ (byte >>> 4)]!) >>> 0;
    crc = ((crc << 4) ^ CKSUM_NIBBLE_TABLE[(crc >>> 28) ^ (byte & 0x0f)]!) >>> 0;
  }
  return `${(~crc >>> 0).toString(10)}-${bytes.length}`;
}
