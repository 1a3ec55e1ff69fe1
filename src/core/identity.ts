// Project identity (docs/contract.md §3.2): which velesdb-memory project/session a directory belongs to,
// and whether that repository opted in to the learning loop. A user-wide install runs in
// every repository on the machine, so anything unexpected here fails open: no file, a file
// that is not a JSON object, or a field of the wrong type all mean "defaults, not enforced".
import * as fs from "node:fs";
import * as path from "node:path";
import { readBoundedFile } from "./bounded-read.ts";
import { posixCksum } from "./cksum.ts";
import { reportProblem } from "./diagnostics.ts";
import { noteProject } from "./stats-note.ts";

export const CONFIG_FILE_NAME = ".velesdb-hooks.json";
const MAX_DIRECTORIES_WALKED = 20;
/** A config holds three short fields; anything bigger is not one (and is never read whole). */
const MAX_CONFIG_BYTES = 64 * 1024;
/**
 * `project` and `session` are identifiers quoted into model-facing text, not prose, and
 * velesdb-memory 0.17.0 refuses to save under one that is blank after trimming or over 256
 * UTF-8 bytes (src/limits.rs:138, src/context/memory_bridge.rs:258-272; measured: 256 bytes
 * saved, 257 refused with -32602, "   " refused). A slot the server refuses would make every
 * Stop ask for a save that fails, so the hooks never name one.
 */
export const MAX_SLOT_NAME_BYTES = 256;
// C0, DEL, C1, and the Unicode line and paragraph separators.
const NON_PRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const IS_WINDOWS = process.platform === "win32";
const CURRENT_UID = typeof process.getuid === "function" ? process.getuid() : -1;
export const DEFAULT_SESSION_SLOT = "rolling";
/**
 * The largest `context_budget`: with the lines around it, the session-start text stays under the
 * 9 000-character head Codex and the DeepSeek bridge keep and Claude Code's 10 000-character
 * cap (docs/working-context.md "The budget").
 */
export const MAX_CONTEXT_BUDGET = 6000;

export interface ProjectIdentity {
  /** The velesdb-memory project: the config's `project`, else the start directory's basename. */
  readonly project: string;
  /** The working-context slot: the config's `session`, else "rolling" (one rolling state per project). */
  readonly session: string;
  /** Canonical directory holding the config file; "" when none applies. */
  readonly root: string;
  /** Only the JSON value `true` in `enforce_learning_loop` turns the guard on. */
  readonly enforceLearningLoop: boolean;
  /**
   * `context_budget`: the characters of working context SessionStart may inject (0: the hook
   * loads nothing and only names the call); undefined: the host's default (session-memory.ts).
   */
  readonly contextBudget: number | undefined;
  /** `auto_save`: only the JSON value `false` stops Stop and PreCompact saving a compiled context themselves. */
  readonly autoSave: boolean;
  /** The canonical start directory the walk began from. */
  readonly start: string;
  /** The config file found, even when it did not parse (doctor reports it). */
  readonly configPath: string;
  /** Why a found config file was ignored, when it was. */
  readonly configProblem: string;
}

/**
 * canonicalStartDirectory("/repo/link/new/file.ts") → the nearest existing ancestor, resolved
 * through symlinks. An edit through a symlinked directory must get the policy of the repository
 * whose bytes it touches, even for a file that does not exist yet.
 */
export function canonicalStartDirectory(start: string, baseDir: string = process.cwd()): string {
  let candidate = path.resolve(baseDir, start);
  for (let depth = 0; depth < 256; depth++) {
    try {
      if (fs.statSync(candidate, { throwIfNoEntry: false })?.isDirectory()) return fs.realpathSync.native(candidate);
    } catch {
      // Missing or unreadable: try its parent.
    }
    const parent = path.dirname(candidate);
    if (parent === candidate) break;
    candidate = parent;
  }
  return candidate;
}

/** resolveProjectIdentity(dir) → identity from the first `.velesdb-hooks.json` within 20 directories up. */
export function resolveProjectIdentity(startDirectory: string, baseDir?: string): ProjectIdentity {
  const start = canonicalStartDirectory(startDirectory, baseDir);
  const defaults = {
    project: defaultProjectName(start),
    session: DEFAULT_SESSION_SLOT,
    root: "",
    enforceLearningLoop: false,
    contextBudget: undefined,
    autoSave: true,
    start,
    configPath: "",
    configProblem: "",
  };
  let dir = start;
  for (let walked = 0; walked < MAX_DIRECTORIES_WALKED; walked++) {
    const candidate = path.join(dir, CONFIG_FILE_NAME);
    const found = inspectConfigCandidate(candidate);
    if (found === "foreign") {
      // git's safe.directory rule: another user's file (a /tmp/.velesdb-hooks.json planted
      // above every repository under /tmp) must not opt anyone in or out. Root's counts.
      reportProblem(`${JSON.stringify(candidate)} is owned by another user: skipped`);
    } else if (found !== "absent") {
      // A link stops the walk like any broken file, but is never followed (git commits links;
      // O_NOFOLLOW alone would not say so on Windows).
      const identity =
        found === "link"
          ? { ...defaults, configPath: candidate, configProblem: "is a symlink" }
          : identityFromConfig(candidate, dir, defaults);
      if (identity.configProblem !== "")
        reportProblem(`${JSON.stringify(candidate)} ${identity.configProblem}: ignored, defaults apply`);
      return noteProject(identity);
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return noteProject(defaults);
}

function identityFromConfig(configPath: string, dir: string, defaults: ProjectIdentity): ProjectIdentity {
  const read = readConfigText(configPath);
  if (typeof read !== "string") return { ...defaults, configPath, configProblem: read.problem };
  let parsed: unknown;
  try {
    // A UTF-8 BOM first (Windows PowerShell 5.1's `Set-Content -Encoding UTF8`, old Notepad) is
    // an encoding mark, not content: JSON.parse refuses it, and the file's project and
    // enforce_learning_loop were ignored (docs/hardening.md §6). The installer reads settings the same way.
    parsed = JSON.parse(read.startsWith("\uFEFF") ? read.slice(1) : read);
  } catch {
    return { ...defaults, configPath, configProblem: "is not valid JSON" };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ...defaults, configPath, configProblem: "is not a JSON object" };
  }
  const config = parsed as Record<string, unknown>;
  for (const field of ["project", "session"] as const) {
    const problem = slotNameProblem(config[field]);
    if (problem) return { ...defaults, configPath, configProblem: `has a ${field} that ${problem}` };
  }
  const budget = config.context_budget;
  if (
    budget !== undefined &&
    !(typeof budget === "number" && Number.isInteger(budget) && budget >= 0 && budget <= MAX_CONTEXT_BUDGET)
  )
    return {
      ...defaults,
      configPath,
      configProblem: `has a context_budget that is not a whole number from 0 to ${MAX_CONTEXT_BUDGET}`,
    };
  // `dir` is the canonical start or one of its ancestors, all canonical already: resolving it
  // again cost every hook a second realpath of the same path (docs/performance/2026-12-02-io-floor.md).
  const root = dir;
  return {
    ...defaults,
    project: nonEmptyString(config.project) ?? defaults.project,
    session: nonEmptyString(config.session) ?? defaults.session,
    enforceLearningLoop: config.enforce_learning_loop === true,
    contextBudget: budget as number | undefined,
    autoSave: config.auto_save !== false,
    root,
    configPath,
  };
}

/**
 * slotNameProblem("x".repeat(4400)) → why a `project`/`session` value cannot be used. Both are
 * quoted into every session-start text: an unbounded one could push the load call past a
 * host's context cut (Codex, dsh: 9 000 characters), and a newline could forge a line of it.
 * A value of another type keeps its old meaning (that field's default).
 */
export function slotNameProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  if (value.trim() === "") return "is blank (velesdb-memory saves nothing under a blank id)";
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_SLOT_NAME_BYTES)
    return `is ${bytes} bytes, over velesdb-memory's ${MAX_SLOT_NAME_BYTES}-byte cap for an id`;
  if (NON_PRINTABLE.test(value)) return "holds a newline or another control character";
  return undefined;
}

/** A host session id goes into the slot as it is when it is this plain and short (UUIDs, Codex's ids). */
const PLAIN_SESSION_ID = /^[A-Za-z0-9._:-]{1,80}$/;

/**
 * sessionSlot("rolling", "5f0c…") → "rolling/5f0c…": the working-context slot of one host
 * session (docs/working-context.md). velesdb-memory 0.17.0 upserts per (project, session), so
 * two sessions of one repository open at once that shared one slot overwrote each other at
 * Stop; each now saves its own, and SessionStart's load names the others (other_sessions,
 * most recently saved first). An odd or long host id is replaced by its cksum; the result is
 * never blank and never over MAX_SLOT_NAME_BYTES. No session id: the base slot, as before.
 */
export function sessionSlot(base: string, hostSession: string | undefined): string {
  if (hostSession === undefined || hostSession.trim() === "") return base;
  const suffix = PLAIN_SESSION_ID.test(hostSession) ? hostSession : `id-${posixCksum(hostSession)}`;
  const room = MAX_SLOT_NAME_BYTES - Buffer.byteLength(`/${suffix}`, "utf8");
  return `${cutToBytes(base, room)}/${suffix}`;
}

/** cutToBytes("é…", 10) → the longest prefix of whole characters within 10 UTF-8 bytes. */
function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let out = "";
  let used = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, "utf8");
    if (used + size > maxBytes) break;
    out += char;
    used += size;
  }
  return out;
}

type ConfigCandidate = "absent" | "foreign" | "link" | "config";

/**
 * inspectConfigCandidate(p) → "config" for a regular file, "link" for a symlink, "foreign" for
 * either when another user owns it, "absent" for nothing or anything else (docs/contract.md §3.2: the first
 * regular file counts, so a directory or a FIFO there is passed by).
 */
function inspectConfigCandidate(p: string): ConfigCandidate {
  let st: fs.Stats | undefined;
  try {
    // Most directories of the walk have no config: no exception for those (state.ts, lstatOrNull).
    st = fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return "absent";
  }
  if (st === undefined) return "absent";
  if (!IS_WINDOWS && !isTrustedOwner(st.uid)) return "foreign";
  if (st.isSymbolicLink()) return "link";
  return st.isFile() ? "config" : "absent";
}

/**
 * readConfigText(p) → at most 64 KiB of the file, or why it cannot be used. The size from
 * stat is never trusted (a sparse 4 GB file costs nothing to create): the read itself is
 * bounded. O_NOFOLLOW because the file is repository content (git commits links), O_NONBLOCK
 * so a FIFO swapped in after the lstat cannot hang the hook.
 */
function readConfigText(p: string): string | { readonly problem: string } {
  const read = readBoundedFile(p, MAX_CONFIG_BYTES, { followLink: false });
  // The owner decides before the size does: another user's file is named as such.
  if (read.stat?.isFile() && !IS_WINDOWS && !isTrustedOwner(read.stat.uid))
    return { problem: "is owned by another user" };
  if (!read.ok) return { problem: read.code === undefined || read.code === "ELOOP" ? read.problem : "cannot be read" };
  return read.bytes.toString("utf8");
}

function isTrustedOwner(uid: number): boolean {
  return uid === 0 || uid === CURRENT_UID;
}

function defaultProjectName(start: string): string {
  // The filesystem root has no basename, and a directory may be named " ": neither is a
  // project velesdb-memory saves under (slotNameProblem), so both are "root".
  const name = cutToBytes(path.basename(start), MAX_SLOT_NAME_BYTES);
  return name.trim() === "" ? "root" : name;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
