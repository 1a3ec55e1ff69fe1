// install and uninstall as one pipeline over the client table (docs/contract.md §9), knowing no client by
// name; this module runs the steps in order, each of which lives in its own module:
// 1. read every file a selected client owns (its registry, its sections) and the manifest of
//    what earlier installs wrote (manifest.ts);
// 2. plan each edit in memory (plan-run.ts; each file's edit a pure function of its bytes,
//    plan-changes.ts; what a plan holds, file-change.ts);
// 3. preflight (plan-run.ts): refuse before the first write when anything is unsafe (a broken or
//    foreign link, a link root may not follow in another user's home (foreign-home.ts), a
//    directory, a file that does not parse or holds a key twice, a file whose owner a rewrite
//    would change, markers out of order) — one refusal stops the whole command;
// 4. write: the binary first on install (entries must never name a binary that is not there),
//    then each file, then the manifest (write-plan.ts); when a write fails, every file this run
//    already changed is put back (bytes, mode, owner, backup), and so is a binary it placed;
// 5. report only what happened, after it happened (change-report.ts). Uninstall then removes
//    the binary unless a file still runs it (binary-users.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { inspectBinary, placeBinary, removeBinary, runningBinary, type BinaryState } from "./binary.ts";
import { stillNamedBy } from "./steps/binary-users.ts";
import { report } from "./steps/change-report.ts";
import type { InstallerClient } from "./client.ts";
import { CLIENTS } from "./clients/index.ts";
import { errorCode } from "../core/state.ts";
import type { McpSource } from "./server/mcp-server.ts";
import { shown, type InstallerContext } from "./paths.ts";
import { plan } from "./steps/plan-run.ts";
import type { Output } from "./check/report.ts";
import { remainingRecords, writeAll, writesOf } from "./steps/write-plan.ts";

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;

export interface PipelineOptions {
  readonly dryRun: boolean;
  /** install --mcp / --mcp-url: the velesdb-memory server to register for each client. */
  readonly mcp?: McpSource;
  /** --client was given: uninstall then leaves the registries the manifest remembers for other clients alone. */
  readonly explicit: boolean;
  /**
   * Runs the command again while holding the installer's lock (index.ts, lock.ts), when this
   * run finds something to write; a run that refuses, or finds everything in step, takes no
   * lock and so changes nothing at all. Undefined: already held (or not wanted).
   */
  readonly whileLocked?: (run: () => number) => number;
}

export function install(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  options: PipelineOptions,
  out: Output,
): number {
  if (clients.length === 0) {
    out.problem(
      `no supported agent found (looked for ${CLIENTS.map((c) => describeHome(ctx, c)).join(", ")}); name one with --client`,
    );
    return EXIT_PROBLEM;
  }
  const running = runningBinary();
  const planned = plan(ctx, clients, "install", options.explicit, options.mcp);
  const refusals = [...planned.refusals];
  if (!running.ok) refusals.push(running.problem);
  if (!("plans" in planned) || refusals.length > 0 || !running.ok) return refuse(out, refusals);
  const { stable } = planned;
  const binary: BinaryState = inspectBinary(stable, running);
  if (binary.state === "blocked") return refuse(out, [`${shown(ctx, stable)} ${binary.problem}`]);

  const binaryChanges = binary.state !== "in step";
  if (options.dryRun) {
    out.line("dry run: nothing is written");
    out.line(
      binaryChanges
        ? `binary: would copy this executable to ${shown(ctx, stable)}`
        : `binary: ${shown(ctx, stable)} is already this version`,
    );
    report(ctx, planned.plans, "install", true, stable, out);
    return EXIT_OK;
  }
  // Planned again under the lock: what was read so far may be changed by a command that holds it.
  if (options.whileLocked && (binaryChanges || writesOf(planned).length > 0))
    return options.whileLocked(() => install(ctx, clients, { ...options, whileLocked: undefined }, out));
  if (binaryChanges) {
    try {
      placeBinary(running.path, stable);
    } catch (error) {
      out.problem(
        `could not place the binary at ${shown(ctx, stable)} (${errorCode(error)}); no settings were changed`,
      );
      return EXIT_PROBLEM;
    }
  }
  const written = writeAll(ctx, planned, "install", out);
  if (!written) {
    // Entries of this run are all undone; a binary this run put where none was goes too.
    if (binary.state === "absent") {
      try {
        removeBinary(stable, planned.tree);
        out.problem(`binary: ${shown(ctx, stable)} removed again`);
      } catch (error) {
        out.problem(`binary: could not remove ${shown(ctx, stable)} again (${errorCode(error)})`);
      }
    }
    return EXIT_PROBLEM;
  }
  out.line(
    binaryChanges
      ? `binary: copied this executable to ${shown(ctx, stable)}`
      : `binary: ${shown(ctx, stable)} is already this version`,
  );
  report(ctx, planned.plans, "install", false, stable, out);
  return EXIT_OK;
}

export function uninstall(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  options: PipelineOptions,
  out: Output,
): number {
  const planned = plan(ctx, clients, "uninstall", options.explicit);
  if (!("plans" in planned) || planned.refusals.length > 0) return refuse(out, planned.refusals);
  const { stable, tree } = planned;
  if (!options.dryRun && options.whileLocked && (writesOf(planned).length > 0 || fs.existsSync(stable))) {
    return options.whileLocked(() => uninstall(ctx, clients, { ...options, whileLocked: undefined }, out));
  }
  if (options.dryRun) out.line("dry run: nothing is written");
  else if (!writeAll(ctx, planned, "uninstall", out)) return EXIT_PROBLEM;
  report(ctx, planned.plans, "uninstall", options.dryRun, stable, out);

  const cleaned = new Set(planned.plans.map((p) => path.resolve(p.registryPath)));
  const users = stillNamedBy(ctx, stable, tree, cleaned, remainingRecords(planned), planned.reach);
  const present = fs.existsSync(stable);
  if (!present) out.line(`binary: ${shown(ctx, stable)} is not there`);
  else if (users.length > 0)
    out.line(
      `binary: kept at ${shown(ctx, stable)} (${users.join(", ")} still ${users.length === 1 ? "uses" : "use"} it)`,
    );
  else if (options.dryRun) out.line(`binary: would remove ${shown(ctx, stable)}`);
  else {
    try {
      const movedTo = removeBinary(stable, tree);
      out.line(
        `binary: removed ${shown(ctx, stable)}${movedTo ? ` (it was running: moved to ${shown(ctx, movedTo)}, deleted by the next install or uninstall)` : ""}`,
      );
    } catch (error) {
      out.problem(`could not remove ${shown(ctx, stable)} (${errorCode(error)})`);
      return EXIT_PROBLEM;
    }
  }
  return EXIT_OK;
}

export function refuse(out: Output, refusals: readonly string[]): number {
  for (const refusal of refusals) out.problem(`refused: ${refusal}`);
  out.problem("nothing was changed");
  return EXIT_PROBLEM;
}

function describeHome(ctx: InstallerContext, client: InstallerClient): string {
  const home = client.home(ctx);
  return home.ok ? shown(ctx, home.path) : client.name;
}
