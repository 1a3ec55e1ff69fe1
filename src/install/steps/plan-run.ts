// Steps 1 to 3 of pipeline.ts: which registries a run acts on (the selected clients', and on an
// uninstall without --client every one the manifest remembers), each file of theirs read,
// planned in memory (plan-changes.ts, mcp-edit.ts) and refused when unsafe. Every reason to
// refuse is gathered here, before the first write, so one refusal stops the whole command.
import * as fs from "node:fs";
import * as path from "node:path";
import { primaryPath, type InstallerClient } from "../client.ts";
import { CLIENTS } from "../clients/index.ts";
import type { ClientPlan, FileChange, Mode, Planned } from "./file-change.ts";
import { clientFiles, foreignHomeOwner, linkProblem, reachFor } from "../files/foreign-home.ts";
import { manifestPath, readManifest, recordFor, type Manifest } from "./manifest.ts";
import type { McpSource } from "../server/mcp-server.ts";
import { mcpInstallCommand, mcpReport } from "../server/mcp-check.ts";
import { planMcpEdit } from "../server/mcp-edit.ts";
import { readMcpFile } from "../server/mcp-read.ts";
import { ourTree, shown, stableBinaryPath, type InstallerContext } from "../paths.ts";
import { planRegistryChange, planSectionChange, type McpEditFor } from "./plan-changes.ts";
import { readRegistry } from "../entries/registry-file.ts";
import { readRulesFile } from "../entries/rules.ts";

/** One registry to act on: a client's current one, or (uninstall) one the manifest remembers. */
interface Target {
  readonly client: InstallerClient;
  readonly registryPath: string;
  readonly withSections: boolean;
}

/** plan(ctx, clients, mode, explicit) → the binary path and, per registry, every file's edit; or every reason to refuse. */
export function plan(
  ctx: InstallerContext,
  clients: readonly InstallerClient[],
  mode: Mode,
  explicit: boolean,
  mcp?: McpSource,
): Planned | { refusals: string[] } {
  const stableResolved = stableBinaryPath(ctx);
  const treeResolved = ourTree(ctx);
  if (!stableResolved.ok || !treeResolved.ok)
    return { refusals: [stableResolved.ok ? "velesdb-hooks' directory is unusable" : stableResolved.problem] };
  const stable = stableResolved.path;
  const tree = treeResolved.path;
  const reach = reachFor(ctx);
  for (const own of [stable, manifestPath(tree)]) {
    const problem = reach(own);
    if (problem) return { refusals: [`${shown(ctx, own)} ${problem}`] };
  }
  const manifest = readManifest(tree);
  if (!manifest.ok)
    return {
      refusals: [
        `${shown(ctx, manifest.path)} (velesdb-hooks' record of what it installed) ${manifest.problem}; move it aside`,
      ],
    };
  const refusals: string[] = [];
  const targets: Target[] = [];
  for (const client of clients) {
    const registryPath = primaryPath(client, ctx);
    if (!registryPath.ok) refusals.push(`${client.name}: ${registryPath.problem}`);
    else targets.push({ client, registryPath: registryPath.path, withSections: true });
  }
  // uninstall without --client: every registry an install of ours wrote, wherever it is.
  if (mode === "uninstall" && !explicit) {
    for (const record of manifest.records) {
      if (record.kind === "mcp") continue; // with its client's plan (planMcp)
      const client = CLIENTS.find((c) => c.name === record.client);
      // A client without a registry (OpenCode) is planned through its sections, at today's paths.
      if (!client?.registry || targets.some((t) => path.resolve(t.registryPath) === path.resolve(record.path)))
        continue;
      if (client.sections?.some((section) => path.resolve(section.path(ctx)) === path.resolve(record.path))) continue;
      const problem = recordProblem(ctx, client, record.path);
      if (problem)
        refusals.push(
          `${client.name}: ${shown(ctx, manifest.path)} names ${shown(ctx, record.path)}, which ${problem}`,
        );
      else targets.push({ client, registryPath: record.path, withSections: false });
    }
  }
  const plans: ClientPlan[] = [];
  for (const target of targets) {
    const unreachable = clientFiles(ctx, target.client, target.registryPath, target.withSections).find(
      (p) => reach(p) !== undefined,
    );
    if (unreachable !== undefined) {
      refusals.push(`${target.client.name}: ${shown(ctx, unreachable)} ${reach(unreachable)}`);
      continue;
    }
    const planned = planTarget(ctx, target, stable, tree, manifest, mode, mcp);
    if (planned.ok) plans.push(planned.plan);
    else refusals.push(`${target.client.name}: ${planned.problem}`);
  }
  return { stable, tree, manifest, plans, refusals, reach };
}

/**
 * recordProblem(ctx, client, path) → why uninstall may not act on a path only the record names
 * (what follows "which"), or undefined. In one's own home the record leads nowhere one could
 * not go anyway. For root in another user's home the record is that user's word (the file is
 * theirs by design), so it is obeyed only for a file that user owns, reached through that
 * user's links, and named like a file the client writes (docs/decisions.md#installer).
 */
function recordProblem(ctx: InstallerContext, client: InstallerClient, recorded: string): string | undefined {
  const owner = foreignHomeOwner(ctx.home);
  if (!owner) return undefined;
  const registry = client.registry?.path(ctx);
  const name = registry?.ok ? path.basename(registry.path) : undefined;
  if (client.configFile === undefined && path.basename(recorded) !== name) {
    return `is not a file ${client.name} reads hooks from (${name ?? "its registry"}); velesdb-hooks never wrote it: remove that record`;
  }
  const problem = linkProblem(recorded, owner, (p) => shown(ctx, p));
  if (problem) return problem;
  try {
    const st = fs.statSync(recorded);
    if (st.uid !== owner.uid) {
      const again =
        client.configFile === undefined
          ? ""
          : ` (to clean it, name it: uninstall --client ${client.name} --config PATH)`;
      return `belongs to uid ${st.uid}, not to the home's owner (uid ${owner.uid}); run by another uid, velesdb-hooks obeys that record only for the owner's files${again}`;
    }
  } catch {
    // Gone, or not reachable: reading it says so.
  }
  return undefined;
}

function planTarget(
  ctx: InstallerContext,
  target: Target,
  stable: string,
  tree: string,
  manifest: Manifest,
  mode: Mode,
  mcp: McpSource | undefined,
): { ok: true; plan: ClientPlan } | { ok: false; problem: string } {
  const { client, registryPath } = target;
  const notes: string[] = [];
  // The MCP server entry (install --mcp, or an uninstall that finds one of ours remembered).
  const spot = target.withSections ? client.mcp?.files[0] : undefined;
  const spotPath = spot?.path(ctx);
  if (mode === "install" && mcp && !client.mcp)
    notes.push(
      `${client.name}: MCP server not written: ${client.mcpUnchecked ?? "velesdb-hooks does not know where this agent reads MCP servers"}`,
    );
  // Hooks without the server they point at lock opted-in edits (docs/mcp-server.md): install without
  // --mcp says so at once, with the command that wires it, rather than leaving it to check.
  if (mode === "install" && !mcp && client.mcp && target.withSections && mcpReport(ctx, client, tree, true).drifted) {
    notes.push(
      `${client.name}: note: no usable velesdb-memory MCP server where this agent reads one; the hooks ask for its tools. Add it: ${mcpInstallCommand(client)}`,
    );
  }
  if (spotPath && !spotPath.ok && mode === "install" && mcp) return { ok: false, problem: spotPath.problem };
  const mcpPath = spotPath?.ok ? spotPath.path : undefined;
  const mcpRecord = mcpPath === undefined ? undefined : recordFor(manifest, client.name, mcpPath, "mcp");
  const mcpActive =
    spot !== undefined && mcpPath !== undefined && (mode === "install" ? mcp !== undefined : mcpRecord !== undefined);
  const mcpEdit: McpEditFor = (text, creates, standalone) =>
    planMcpEdit({
      ctx,
      client,
      spec: client.mcp!,
      spot: spot!,
      filePath: mcpPath!,
      text,
      creates,
      mode,
      source: mcp,
      record: mcpRecord,
      mayDelete: standalone,
    });
  // Gemini and Qwen keep servers in the registry's own file: one edit of that file.
  const shared = mcpActive && client.registry !== undefined && path.resolve(mcpPath) === path.resolve(registryPath);

  const changes: FileChange[] = [];
  let hooksAfter: unknown;
  if (client.registry) {
    const file = readRegistry(registryPath, tree, client.registry.skeleton);
    if (file.kind === "refused") return { ok: false, problem: `${shown(ctx, file.path)} ${file.problem}` };
    const planned = planRegistryChange({
      ctx,
      client,
      registry: client.registry,
      registryPath,
      file,
      stable,
      manifest,
      mode,
      sharedMcp: shared ? mcpEdit : undefined,
      notes,
    });
    if (!planned.ok) return planned;
    changes.push(planned.change);
    hooksAfter = planned.hooksAfter;
  }
  if (mcpActive && !shared) {
    const read = readMcpFile(mcpPath, spot.format, tree, [spot.servers(ctx)]);
    if (read.kind === "refused") return { ok: false, problem: `${shown(ctx, read.path)} ${read.problem}` };
    const edit = mcpEdit(read.kind === "present" ? read.file.text : "", read.kind === "absent", true);
    if (!edit.ok) return { ok: false, problem: `${shown(ctx, mcpPath)} ${edit.problem}` };
    changes.push({
      file: read.file,
      text: edit.edit.text,
      parts: edit.edit.parts,
      unchanged: edit.edit.unchanged,
      record: undefined,
      mcp: { record: edit.edit.record },
    });
  }
  for (const section of target.withSections ? (client.sections ?? []) : []) {
    const sectionFile = readRulesFile(section.path(ctx), tree);
    if (sectionFile.kind === "refused")
      return { ok: false, problem: `${shown(ctx, sectionFile.path)} ${sectionFile.problem}` };
    const planned = planSectionChange({ ctx, client, section, file: sectionFile, stable, manifest, mode });
    if (!planned.ok) return planned;
    changes.push(planned.change);
  }
  return { ok: true, plan: { client, registryPath, changes, hooksAfter, notes } };
}
