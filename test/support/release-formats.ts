// Reads just enough of an executable's header to say what it is, independently of file(1):
// ELF class, machine and program interpreter (glibc vs musl loader); Mach-O CPU, file type and
// whether it carries a code signature (Apple silicon kills an unsigned binary on exec); PE
// machine, PE32+ and subsystem (hooks need a console program: a GUI one has no stdout).
import * as fs from "node:fs";

export type ExecutableFormat =
  | {
      readonly kind: "elf";
      readonly bits: 64 | 32;
      readonly machine: "x86-64" | "aarch64" | string;
      readonly interpreter: string | undefined;
    }
  | {
      readonly kind: "mach-o";
      readonly cpu: "x86_64" | "arm64" | string;
      readonly executable: boolean;
      readonly signed: boolean;
    }
  | { readonly kind: "pe"; readonly machine: "x86-64" | string; readonly pe32plus: boolean; readonly console: boolean }
  | { readonly kind: "unknown" };

const HEAD_BYTES = 1 << 16;

/** readFormat(path) → the executable format of the file's first 64 KiB. */
export function readFormat(file: string): ExecutableFormat {
  const fd = fs.openSync(file, "r");
  const head = Buffer.alloc(HEAD_BYTES);
  const length = fs.readSync(fd, head, 0, HEAD_BYTES, 0);
  fs.closeSync(fd);
  const b = head.subarray(0, length);
  if (b.readUInt32BE(0) === 0x7f454c46) return elf(b);
  if (b.readUInt32LE(0) === 0xfeedfacf) return machO(b);
  if (b.toString("latin1", 0, 2) === "MZ") return pe(b);
  return { kind: "unknown" };
}

function elf(b: Buffer): ExecutableFormat {
  const bits = b[4] === 2 ? 64 : 32;
  const machineCode = b.readUInt16LE(0x12);
  const machine = machineCode === 0x3e ? "x86-64" : machineCode === 0xb7 ? "aarch64" : `0x${machineCode.toString(16)}`;
  let interpreter: string | undefined;
  if (bits === 64) {
    const phoff = Number(b.readBigUInt64LE(0x20));
    const phentsize = b.readUInt16LE(0x36);
    const phnum = b.readUInt16LE(0x38);
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (b.readUInt32LE(at) !== 3) continue; // PT_INTERP
      const offset = Number(b.readBigUInt64LE(at + 8));
      const size = Number(b.readBigUInt64LE(at + 32));
      interpreter = b.toString("latin1", offset, offset + size).replace(/\0+$/, "");
    }
  }
  return { kind: "elf", bits, machine, interpreter };
}

function machO(b: Buffer): ExecutableFormat {
  const cpuCode = b.readUInt32LE(4);
  const cpu = cpuCode === 0x01000007 ? "x86_64" : cpuCode === 0x0100000c ? "arm64" : `0x${cpuCode.toString(16)}`;
  const executable = b.readUInt32LE(12) === 2; // MH_EXECUTE
  const ncmds = b.readUInt32LE(16);
  let at = 32;
  let signed = false;
  for (let i = 0; i < ncmds && at + 8 <= b.length; i++) {
    if (b.readUInt32LE(at) === 0x1d) signed = true; // LC_CODE_SIGNATURE
    at += b.readUInt32LE(at + 4);
  }
  return { kind: "mach-o", cpu, executable, signed };
}

function pe(b: Buffer): ExecutableFormat {
  const header = b.readUInt32LE(0x3c);
  if (b.toString("latin1", header, header + 4) !== "PE\0\0") return { kind: "unknown" };
  const machineCode = b.readUInt16LE(header + 4);
  const optional = header + 24;
  const pe32plus = b.readUInt16LE(optional) === 0x20b;
  const subsystem = b.readUInt16LE(optional + 68);
  return {
    kind: "pe",
    machine: machineCode === 0x8664 ? "x86-64" : `0x${machineCode.toString(16)}`,
    pe32plus,
    console: subsystem === 3,
  };
}
