// The I/O floor of the benchmark (docs/contract.md §12, docs/performance/2026-12-02-io-floor.md): a
// program compiled with the release flags
// that does only what no guard can skip, the way a careful hook would do it, and nothing else:
//   read stdin (one synchronous read loop), parse it, realpath the workspace, walk up at most 20
//   directories for `.velesdb-hooks.json` (lstat each candidate, read and parse the one found),
//   read one marker from the state directory, write one record (O_EXCL temp file + rename),
//   write one answer (one synchronous write).
// It imports nothing from src/: a floor measured through our own code would hide our own cost.
import * as fs from "node:fs";
import * as path from "node:path";

/** readStdin() → all of stdin as text, by synchronous reads: the way a careful hook reads its payload. */
function readStdin(): string {
  const chunks: Buffer[] = [];
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      if ((error as NodeJS.ErrnoException).code === "EOF") break;
      throw error;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString("utf8");
}

const CONFIG_FILE_NAME = ".velesdb-hooks.json";
const MAX_DIRECTORIES_WALKED = 20;

function findConfig(start: string): Record<string, unknown> | undefined {
  let dir = start;
  for (let walked = 0; walked < MAX_DIRECTORIES_WALKED; walked++) {
    const candidate = path.join(dir, CONFIG_FILE_NAME);
    try {
      if (fs.lstatSync(candidate).isFile())
        return JSON.parse(fs.readFileSync(candidate, "utf8")) as Record<string, unknown>;
    } catch {
      // absent: keep walking
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

const payload = JSON.parse(readStdin()) as { cwd?: string; session_id?: string };
const workspace = fs.realpathSync(payload.cwd ?? process.cwd());
const config = findConfig(workspace);
const stateDir = path.join(process.env.TMPDIR || "/tmp", `velesdb-agent-hooks-${process.getuid?.() ?? 0}`, "io-floor");
fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
let marker = "";
try {
  marker = fs.readFileSync(path.join(stateDir, "marker"), "utf8");
} catch {
  // no marker yet
}
const record = JSON.stringify({
  session: payload.session_id ?? "",
  project: config?.project ?? path.basename(workspace),
  marker: marker.length,
  at: Date.now(),
});
const temp = path.join(stateDir, `.record.${process.pid}.tmp`);
const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
fs.writeSync(fd, record);
fs.closeSync(fd);
fs.renameSync(temp, path.join(stateDir, "record.json"));
fs.writeSync(1, "{}\n");
