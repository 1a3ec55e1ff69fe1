// A reference for the bench (docs/performance/2026-12-02-io-floor.md), not a floor: the I/O floor
// plus every other system call
// `velesdb-hooks claude stop` makes on its first Stop of a session, written as straight-line
// code in one module. The calls, in order, as strace showed them for that bench case
// (2026-12-02, Bun 1.4.4): fstat of stdin, the stdin reads, realpath of the cwd, lstat / open
// O_NOFOLLOW / fstat / read of `.velesdb-hooks.json`, lstat / mkdir 0700 / lstat of the state
// directory, a read of /proc/<pid>/stat, the claim (temp file O_EXCL, link, lstat, unlink), an
// lstat each of the manifest, the edit queue and the Stop marker, the marker (temp file O_EXCL |
// O_NOFOLLOW, rename), the claim released (open O_NOFOLLOW, fstat, read, lstat, unlink), and a
// JSON answer of the same size. The hook makes one more after stdin, a read of /proc/self/statm:
// the engine's own, once its heap has grown (the floor makes the same read twice at start-up).
// What the hook spends over this program is not system calls but the engine running the hook's
// code: its modules, functions and heap (docs/performance/2026-12-02-io-floor.md).
// Like the floor it imports nothing from src/.
import * as fs from "node:fs";
import * as path from "node:path";
import { readStdin } from "./stdin.ts";

const NOFOLLOW = fs.constants.O_NOFOLLOW;

function readWithoutFollowing(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW);
  try {
    // /proc files report size 0: the buffer grows until a read returns nothing.
    let buffer = Buffer.allocUnsafe(fs.fstatSync(fd).size + 1);
    let filled = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      filled += n;
      if (filled === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(4096)]);
    }
    return buffer.toString("utf8", 0, filled);
  } finally {
    fs.closeSync(fd);
  }
}

if (fs.fstatSync(0).isCharacterDevice()) process.exit(0);
const payload = JSON.parse(readStdin()) as { cwd?: string; session_id?: string };
const start = path.resolve(process.cwd(), payload.cwd ?? ".");
const workspace = fs.statSync(start).isDirectory() ? fs.realpathSync.native(start) : start;
let config: { project?: string } = {};
for (let dir = workspace, walked = 0; walked < 20; walked++) {
  const candidate = path.join(dir, ".velesdb-hooks.json");
  if (fs.lstatSync(candidate, { throwIfNoEntry: false })?.isFile()) {
    config = JSON.parse(readWithoutFollowing(candidate)) as { project?: string };
    break;
  }
  if (path.dirname(dir) === dir) break;
  dir = path.dirname(dir);
}
const uid = process.getuid?.() ?? 0;
const owner = process.getuid?.() ?? 0; // the hook asks twice (identity's owner check, the state directory's)
const stateDir = path.join(process.env.TMPDIR || "/tmp", `velesdb-agent-hooks-${uid}`);
if (!fs.lstatSync(stateDir, { throwIfNoEntry: false })) fs.mkdirSync(stateDir, { mode: 0o700 });
const state = fs.lstatSync(stateDir);
if (!state.isDirectory() || state.uid !== owner || (state.mode & 0o077) !== 0)
  throw new Error("state directory is not private");

const key = `${config.project ?? path.basename(workspace)}-${payload.session_id ?? ""}`;
const started = readWithoutFollowing(`/proc/${process.pid}/stat`).split(") ")[1]?.split(" ")[19] ?? "";
const claim = path.join(stateDir, `learning-checkpoint-claim-${key}.marker`);
const claimTemp = `${claim}.${process.pid}-${Math.random().toString(16).slice(2)}`;
fs.writeFileSync(claimTemp, `${JSON.stringify({ pid: process.pid, started })}\n`, { mode: 0o600, flag: "wx" });
fs.linkSync(claimTemp, claim);
fs.lstatSync(claimTemp);
fs.unlinkSync(claimTemp);

const checkpointed =
  fs.lstatSync(path.join(stateDir, `learning-checkpoint-manifest-${key}.marker`), { throwIfNoEntry: false }) !==
  undefined;
const queued =
  fs.lstatSync(path.join(stateDir, `learning-dirty-${key}.records`), { throwIfNoEntry: false }) !== undefined;
const marker = path.join(stateDir, `stop-${key}.marker`);
const remindedBefore = fs.lstatSync(marker, { throwIfNoEntry: false }) !== undefined;
const markerTemp = `${marker}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
if (fs.lstatSync(marker, { throwIfNoEntry: false })?.isSymbolicLink()) throw new Error("the marker is a link");
const markerFd = fs.openSync(
  markerTemp,
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW,
  0o600,
);
fs.writeSync(markerFd, "1\n");
fs.closeSync(markerFd);
fs.renameSync(markerTemp, marker);

const holder = JSON.parse(readWithoutFollowing(claim)) as { pid?: number };
if (holder.pid === process.pid && fs.lstatSync(claim).isFile()) fs.unlinkSync(claim);

// About the size of the hook's answer (579 bytes); the words are placeholders, not ours to keep in sync.
const reason = `Reference answer for project ${JSON.stringify(config.project ?? "")}: ${"a sentence of about the length of the reminder. ".repeat(4)}${checkpointed || queued || remindedBefore ? "" : "first Stop"}`;
fs.writeSync(
  1,
  `${JSON.stringify({ hookSpecificOutput: { hookEventName: "Stop", additionalContext: reason }, decision: "block", reason })}\n`,
);
