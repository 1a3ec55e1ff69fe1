// Step 4 of pipeline.ts: a plan's writes (file-change.ts) in order, the files whose text changes
// then the manifest (manifest.ts), each through user-file-write.ts; when one fails, every write
// of this run before it is undone, last first, and the report says what was restored. The
// binary is placed and taken back by pipeline.ts, which knows whether this run put it there.
import * as fs from "node:fs";
import { errorCode } from "../../core/state.ts";
import { isChange, type Mode, type Planned } from "./file-change.ts";
import { ownerOfNearest } from "../files/file-owner.ts";
import { forget, manifestPath, manifestText, remember, type ManifestRecord } from "./manifest.ts";
import { shown, type InstallerContext } from "../paths.ts";
import type { Output } from "../check/report.ts";
import type { WritableFile } from "../files/safe-read.ts";
import { undoWrite, writeUserFile, type Undo } from "../files/user-file-write.ts";

/** The manifest's records after this run: install remembers each file it planned, uninstall forgets them. */
export function remainingRecords(planned: Planned): ManifestRecord[] {
  let records = [...planned.manifest.records];
  for (const clientPlan of planned.plans) {
    for (const change of clientPlan.changes) {
      if (change.record) records = remember(records, change.record);
      else records = forget(records, clientPlan.client.name, change.file.path);
      if (change.mcp?.record)
        records = remember(forget(records, clientPlan.client.name, change.file.path, "mcp"), change.mcp.record);
      else if (change.mcp) records = forget(records, clientPlan.client.name, change.file.path, "mcp");
    }
  }
  return records;
}

/**
 * writeAll → true when every file was written. Files whose text changes are written in plan
 * order, then the manifest; the first failure undoes every write before it (last first) and
 * says what was restored.
 */
export function writeAll(ctx: InstallerContext, planned: Planned, mode: Mode, out: Output): boolean {
  const writes = writesOf(planned);
  const done: Array<{ readonly label: string; readonly where: string; readonly undo: Undo }> = [];
  for (const write of writes) {
    const where = shown(ctx, write.file.path);
    // Checked again just before the write: a link swapped in since the plan is refused too.
    const moved = planned.reach(write.file.path);
    try {
      if (moved !== undefined) throw new Error(moved);
      done.push({ label: write.label, where, undo: writeUserFile(write.file, write.text, write.backup) });
    } catch (error) {
      out.problem(
        `${write.label}: could not ${write.text === null ? "delete" : "write"} ${where} (${moved ?? errorCode(error)})`,
      );
      let restoredAll = true;
      for (const { label, where: was, undo } of done.reverse()) {
        try {
          undoWrite(undo);
          out.problem(`${label}: ${was} restored`);
        } catch (undoError) {
          restoredAll = false;
          const backup = undo.backup ? `; its previous bytes are in ${shown(ctx, undo.backup.path)}` : "";
          out.problem(`${label}: could not restore ${was} (${errorCode(undoError)})${backup}`);
        }
      }
      out.problem(
        restoredAll
          ? `nothing was ${mode === "install" ? "installed" : "uninstalled"}: every file is as it was`
          : "some files could not be restored (see above)",
      );
      return false;
    }
  }
  return true;
}

type PlannedWrite = {
  readonly label: string;
  readonly file: WritableFile;
  readonly text: string | null;
  readonly backup: boolean;
};

/** writesOf(planned) → every file write the plan needs, in order: the files whose text changes, then the manifest. */
export function writesOf(planned: Planned): PlannedWrite[] {
  const writes: PlannedWrite[] = [];
  for (const clientPlan of planned.plans) {
    for (const change of clientPlan.changes) {
      if (isChange(change))
        writes.push({
          label: clientPlan.client.name,
          file: change.file,
          text: change.text,
          backup: change.text !== null,
        });
    }
  }
  const manifestWrite = manifestChange(planned, remainingRecords(planned));
  if (manifestWrite) writes.push({ label: "manifest", ...manifestWrite, backup: false });
  return writes;
}

/** manifestChange(planned, records) → the manifest's new state when it differs from the file; undefined when it does not. */
function manifestChange(
  planned: Planned,
  records: readonly ManifestRecord[],
): { file: WritableFile; text: string | null } | undefined {
  const text = manifestText(records);
  const current = planned.manifest.text;
  if (text === current || (text === undefined && current === undefined)) return undefined;
  const target = manifestPath(planned.tree);
  let file: WritableFile;
  if (current === undefined) file = { kind: "absent", path: target, target, owner: ownerOfNearest(planned.tree) };
  else {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(target);
    } catch {
      // Gone since it was read (another command, before this one took the lock): a write is
      // due either way, and the run under the lock reads it again.
    }
    file = st
      ? {
          kind: "present",
          path: target,
          target,
          linked: false,
          text: current,
          mode: st.mode & 0o7777,
          owner: { uid: st.uid, gid: st.gid },
        }
      : { kind: "absent", path: target, target, owner: ownerOfNearest(planned.tree) };
  }
  return { file, text: text ?? null };
}
