// What install and uninstall plan (pipeline.ts): per client, one FileChange for each file it
// owns (its registry, its MCP file, its sections), held in memory until preflight has refused
// nothing. Types only, and the one question every later step asks of a change: does its text
// differ from the file's? Planning (plan-run.ts, plan-changes.ts) builds these; writing
// (write-plan.ts) and the report (change-report.ts) read them.
import type { InstallerClient } from "../client.ts";
import type { Reach } from "../files/foreign-home.ts";
import type { Manifest, ManifestRecord } from "./manifest.ts";
import type { WritableFile } from "../files/safe-read.ts";

export type Mode = "install" | "uninstall";

/** One file this run would change (or finds unchanged), with what to say about it. */
export interface FileChange {
  readonly file: WritableFile;
  /** The file's text after the change; null: the file goes (install created it, it holds nothing else now). */
  readonly text: string | null;
  /** What changes, in both tenses: [past, future] pairs joined into the report line. */
  readonly parts: ReadonlyArray<readonly [past: string, future: string]>;
  /** What follows the file's name when nothing changes (" is already in step; unchanged"). */
  readonly unchanged: string;
  /** What the manifest remembers of this file after the run (install), or undefined (forget it). */
  readonly record: ManifestRecord | undefined;
  /** The file holds (or held) an MCP server entry of ours: its record after the run, undefined to forget it. */
  readonly mcp?: { readonly record: ManifestRecord | undefined };
}

export interface ClientPlan {
  readonly client: InstallerClient;
  readonly registryPath: string;
  /** The registry first, then each section. */
  readonly changes: readonly FileChange[];
  /** The registry's `hooks` value after this run. */
  readonly hooksAfter: unknown;
  /** Lines reported after the files' (an MCP server kept as the user configured it, a client without one). */
  readonly notes: readonly string[];
}

export interface Planned {
  readonly stable: string;
  readonly tree: string;
  readonly manifest: Extract<Manifest, { ok: true }>;
  readonly plans: readonly ClientPlan[];
  readonly refusals: readonly string[];
  /** Why a path may not be reached now (root in another user's home, see foreign-home.ts); undefined: it may. */
  readonly reach: Reach;
}

export function isChange(change: FileChange): boolean {
  return change.text !== (change.file.kind === "present" ? change.file.text : "");
}
