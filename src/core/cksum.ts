// POSIX `cksum` (CRC-32/CKSUM over the bytes, then over the length in as few bytes as it
// takes). Marker names are `<kind>-<crc>-<length>.marker` so that the bash reference, which
// ran `printf '%s' "$id" | cksum`, and this binary name the same file for the same identity:
// a user who swaps one for the other mid-session loses no marker.

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
}

/** posixCksum("abc") === "1219131554-3": the CRC and the byte length, as `cksum` prints them. */
export function posixCksum(identity: string | Uint8Array): string {
  const bytes = typeof identity === "string" ? new TextEncoder().encode(identity) : identity;
  const t = crcTable();
  let crc = 0;
  const feed = (byte: number) => {
    crc = ((crc << 8) ^ t[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  };
  for (const b of bytes) feed(b);
  for (let n = bytes.length; n > 0; n = Math.floor(n / 256)) feed(n & 0xff);
  return `${(~crc >>> 0).toString(10)}-${bytes.length}`;
}
