// What uninstall asks before it removes the installed binary (pipeline.ts): which files can still
// run it after this run. A registry or MCP file that cannot be read, or that root may not reach
// in another user's home (foreign-home.ts), counts as a user: the binary is kept rather than
// deleted under an entry that runs it.
import * as fs from "node:fs";
import * as path from "node:path";
import { errorCode } from "../../core/state.ts";
import type { InstallerClient } from "../client.ts";
import { CLIENTS } from "../clients/index.ts";
import type { Reach } from "../files/foreign-home.ts";
import type { ManifestRecord } from "./manifest.ts";
import { MAX_MCP_FILE_BYTES } from "../server/mcp-server.ts";
import { judgeRegistry } from "../entries/owned-entries.ts";
import { shown, type InstallerContext } from "../paths.ts";
import { readRegistry } from "../entries/registry-file.ts";

/**
 * stillNamedBy → the files (as shown) that can still run the stable binary after this run:
 * every registry a client reads by default, every one the manifest remembers, and what each
 * client adds (Codex config.toml), minus the registries this run cleaned. A registry that
 * cannot be read counts as a user: the binary is kept rather than deleted under an entry.
 */
export function stillNamedBy(
  ctx: InstallerContext,
  stable: string,
  tree: string,
  cleaned: ReadonlySet<string>,
  records: readonly ManifestRecord[],
  reach: Reach,
): string[] {
  const candidates: Array<{ client: InstallerClient | undefined; path: string }> = [];
  for (const client of CLIENTS) {
    const registryPath = client.registry?.path(ctx);
    if (registryPath?.ok) candidates.push({ client, path: registryPath.path });
  }
  for (const record of records) {
    // A server entry of ours runs the shared front, this very binary (src/mcp/front.ts); an
    // earlier install's direct entry ran velesdb-memory, and names no stable path of ours.
    if (record.kind === "mcp") {
      if (reach(record.path) !== undefined || mcpFileNames(record.path, stable))
        candidates.push({ client: undefined, path: record.path });
      continue;
    }
    const client = CLIENTS.find((c) => c.name === record.client);
    if (client?.sections?.some((section) => path.resolve(section.path(ctx)) === path.resolve(record.path))) continue;
    candidates.push({ client, path: record.path });
  }
  const users: string[] = [];
  const seen = new Set<string>(cleaned);
  for (const candidate of candidates) {
    const key = path.resolve(candidate.path);
    if (seen.has(key)) continue;
    seen.add(key);
    // A file root may not reach for this user (foreign-home.ts) is not read; it keeps the binary.
    if (
      !candidate.client ||
      reach(candidate.path) !== undefined ||
      registryNames(candidate.client, candidate.path, stable, tree, ctx)
    ) {
      users.push(shown(ctx, candidate.path));
    }
  }
  for (const client of CLIENTS) {
    const unreachable = client.alsoReads?.(ctx).find((p) => reach(p) !== undefined);
    if (unreachable !== undefined) {
      users.push(shown(ctx, unreachable));
      continue;
    }
    const other = client.alsoNamesBinary?.(ctx, stable);
    if (other !== undefined) users.push(shown(ctx, other));
  }
  return users;
}

/** mcpFileNames(file, stable) → the MCP file still holds the stable path (as JSON or TOML spell it); unreadable: true, the binary is kept. */
function mcpFileNames(file: string, stable: string): boolean {
  try {
    if (fs.statSync(file).size > MAX_MCP_FILE_BYTES) return true;
    return fs.readFileSync(file, "utf8").includes(JSON.stringify(stable).slice(1, -1));
  } catch (error) {
    return errorCode(error) !== "ENOENT";
  }
}

function registryNames(
  client: InstallerClient,
  registryPath: string,
  stable: string,
  tree: string,
  ctx: InstallerContext,
): boolean {
  // A client without a registry names the binary in its section file: alsoNamesBinary says so.
  if (!client.registry) return false;
  const file = readRegistry(registryPath, tree, client.registry.skeleton);
  if (file.kind === "refused") return fs.existsSync(registryPath); // Cannot tell: keep the binary.
  if (file.kind === "absent") return false;
  return judgeRegistry(file.hooks, client.registry, stable, ctx.platform).owned.some(
    (entry) => entry.ownership === "ours",
  );
}
