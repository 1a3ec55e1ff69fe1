// Step 5 of pipeline.ts: what install and uninstall say, only after it happened (a failed write
// was once announced as "added … backup in …" before it failed), or in the future tense on a dry
// run. Per client, each file's line (what changed, or that nothing did), then its notes and
// what the client adds (client.ts: afterWrite). Output names files and entries, never content.
import type { ClientPlan, FileChange, Mode } from "./file-change.ts";
import { isChange } from "./file-change.ts";
import { shown, type InstallerContext } from "../paths.ts";
import type { Output } from "../check/report.ts";
import { backupPath } from "../files/user-file-write.ts";

/** report: per client, each file's line (what changed, or that nothing did), then what the client adds. */
export function report(
  ctx: InstallerContext,
  plans: readonly ClientPlan[],
  mode: Mode,
  dryRun: boolean,
  stable: string,
  out: Output,
): void {
  for (const clientPlan of plans) {
    const { client } = clientPlan;
    for (const change of clientPlan.changes)
      out.line(`${client.name}: ${shown(ctx, change.file.path)}${describeChange(ctx, change, dryRun)}`);
    for (const note of clientPlan.notes) out.line(note);
    const after =
      client.afterWrite?.(ctx, {
        mode,
        dryRun,
        registryPath: clientPlan.registryPath,
        hooksAfter: clientPlan.hooksAfter,
        stable,
      }) ?? [];
    for (const line of after) out.line(line);
  }
}

function describeChange(ctx: InstallerContext, change: FileChange, dryRun: boolean): string {
  const { file } = change;
  if (!isChange(change)) return change.unchanged;
  const tense = dryRun ? 1 : 0;
  const parts: string[] = [];
  if (file.kind === "absent") parts.push(dryRun ? "would create it (mode 600)" : "created (mode 600)");
  for (const part of change.parts) parts.push(dryRun ? `would ${part[tense]}` : part[tense]);
  if (file.kind === "present" && change.text !== null)
    parts.push(`${dryRun ? "would back it up to" : "backup in"} ${shown(ctx, backupPath(file))}`);
  if (file.kind === "present" && file.linked)
    parts.push(`${dryRun ? "would write at" : "written at"} the link's target ${shown(ctx, file.target)}`);
  return `: ${parts.join("; ")}`;
}
