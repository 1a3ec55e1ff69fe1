// Record sets (docs/contract.md §3.3): `<kind>-<cksum(session)>.records/` holds one file per repository
// identity, named by the cksum of its canonical JSON. One file per record, not one list file,
// because guards fire concurrently (a model may send 50 edits at once) and a shared file
// would lose updates; same-content writes are harmless, different identities never collide.
// A record is evidence for the learning loop, so anything that is not exactly a record we
// would have written — wrong content, a link, a foreign file — makes the whole set malformed.
import * as fs from "node:fs";
import * as path from "node:path";
import { posixCksum } from "./cksum.ts";
import { parseJsonObject } from "./payload.ts";
import { errorCode, readPrivateFile, recordsPath, writePrivateFile, type StateStore } from "./state.ts";

// The learning loop's state kinds (docs/contract.md §3.3), before the host prefix.
export const PENDING_RECALL = "pending-recall";
export const LEARNING_DIRTY = "learning-dirty";
export const RECALL = "recall";

export interface RepositoryRecord {
  readonly project: string;
  readonly session: string;
  /** The canonical config root of an opted-in repository; never empty. */
  readonly root: string;
}

export interface StoredRecord {
  readonly file: string;
  readonly record: RepositoryRecord;
}

export type RecordSetRead =
  | { readonly state: "ok"; readonly dir: string; readonly records: readonly StoredRecord[] }
  | { readonly state: "linked" | "malformed"; readonly path: string; readonly problem: string };

export type RecordWrite =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly cause: "linked" | "malformed" | "storage";
      readonly path: string;
      readonly problem: string;
    };

/** canonicalRecordJson(r) → `{"project":…,"session":…,"root":…}` (compact, fixed key order, no newline). */
export function canonicalRecordJson(record: RepositoryRecord): string {
  return JSON.stringify({ project: record.project, session: record.session, root: record.root });
}

/** recordFileName(r) → `<cksum of the canonical JSON>.json`, the bash reference's naming. */
export function recordFileName(record: RepositoryRecord): string {
  return `${posixCksum(canonicalRecordJson(record))}.json`;
}

// In-flight writes of writePrivateFile: `<name>.tmp-<pid>-<hex>`; a reader may see one.
const TEMP_FILE = /\.json\.tmp-\d+-[0-9a-f]+$/;
// A control character in any field would let a record name a root it does not hold once a
// line-based tool (or the bash reference, which may share this directory) reads it.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** parseRecord(text) → the record when `text` is exactly one canonical record, else undefined. */
export function parseRecord(text: string): RepositoryRecord | undefined {
  const fields = parseJsonObject(text);
  if (!fields) return undefined;
  return recordFromObject(fields);
}

/** recordFromObject({project, session, root}) → the record when it has exactly those string fields. */
export function recordFromObject(fields: Record<string, unknown>): RepositoryRecord | undefined {
  const keys = Object.keys(fields).sort();
  if (keys.join(",") !== "project,root,session") return undefined;
  const { project, session, root } = fields;
  if (typeof project !== "string" || typeof session !== "string" || typeof root !== "string" || root === "")
    return undefined;
  if ([project, session, root].some((field) => CONTROL_CHARACTER.test(field))) return undefined;
  return { project, session, root };
}

/** listRecords(store, "learning-dirty", sessionId) → every record, or why the set cannot be trusted. */
export function listRecords(store: StateStore & { safe: true }, kind: string, sessionId: string): RecordSetRead {
  const dir = recordsPath(store, kind, sessionId);
  let st: fs.Stats | undefined;
  try {
    // No queue yet is the common case: answered without an exception (state.ts, lstatOrNull).
    st = fs.lstatSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    return { state: "malformed", path: dir, problem: `cannot be inspected (${errorCode(error)})` };
  }
  if (st === undefined) return { state: "ok", dir, records: [] };
  if (st.isSymbolicLink()) return { state: "linked", path: dir, problem: "is a symlink" };
  if (!st.isDirectory()) return { state: "malformed", path: dir, problem: "is not a directory" };
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch (error) {
    return { state: "malformed", path: dir, problem: `cannot be listed (${errorCode(error)})` };
  }
  const records: StoredRecord[] = [];
  for (const name of names) {
    if (TEMP_FILE.test(name)) continue;
    const file = path.join(dir, name);
    const read = readPrivateFile(file, 64 * 1024);
    // Consumed by a concurrent Stop between the listing and this read: it is simply gone.
    if (read.state === "absent") continue;
    if (read.state !== "present") return { state: read.state, path: file, problem: read.problem };
    const record = parseRecord(read.content);
    if (!record) return { state: "malformed", path: file, problem: "does not hold exactly one repository record" };
    if (recordFileName(record) !== name || read.content !== `${canonicalRecordJson(record)}\n`) {
      return { state: "malformed", path: file, problem: "content does not match its name" };
    }
    records.push({ file, record });
  }
  return { state: "ok", dir, records };
}

/** addRecord(store, kind, sessionId, record) → written (or already there, identical), or why not. */
export function addRecord(
  store: StateStore & { safe: true },
  kind: string,
  sessionId: string,
  record: RepositoryRecord,
): RecordWrite {
  const dir = recordsPath(store, kind, sessionId);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errorCode(error) !== "EEXIST")
      return { ok: false, cause: "storage", path: dir, problem: `cannot be created (${errorCode(error)})` };
  }
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return { ok: false, cause: "storage", path: dir, problem: "vanished while being written" };
  if (st.isSymbolicLink()) return { ok: false, cause: "linked", path: dir, problem: "is a symlink" };
  if (!st.isDirectory()) return { ok: false, cause: "malformed", path: dir, problem: "is not a directory" };
  const file = path.join(dir, recordFileName(record));
  const content = `${canonicalRecordJson(record)}\n`;
  const existing = readPrivateFile(file, 64 * 1024);
  if (existing.state === "present") {
    return existing.content === content
      ? { ok: true }
      : { ok: false, cause: "malformed", path: file, problem: "holds another record" };
  }
  if (existing.state !== "absent") return { ok: false, cause: existing.state, path: file, problem: existing.problem };
  const written = writePrivateFile(file, content);
  return written.ok ? written : { ok: false, cause: written.cause, path: file, problem: written.problem };
}

/** removeRecordFile(file) → true when it is gone (already gone counts). */
export function removeRecordFile(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (error) {
    return errorCode(error) === "ENOENT";
  }
}
