// Codex CLI (docs/contract.md §4.2): $CODEX_HOME/hooks.json (default ~/.codex), grouped handlers. Codex
// runs `command` through the session shell, so the path is POSIX-quoted; on Windows it runs
// `commandWindows` in PowerShell instead. No version in argv: the entry's bytes are its trust
// identity. Codex also runs hooks defined in config.toml [hooks] (we never edit that file, we
// report them) and skips any entry the user has not trusted in /hooks, without a word — so
// check, doctor and install all say where trust is missing.
import * as path from "node:path";
import { CODEX } from "../../hosts/codex.ts";
import { codexConfigPath, configTomlEntries, readCodexConfig, trustOf, type EntryTrust } from "./codex-trust.ts";
import { absoluteOverride, printable, shown } from "../paths.ts";
import { ownedEntries } from "../entries/owned-entries.ts";
import { posixQuote, powershellQuote } from "../entries/shell-words.ts";
import { fileInHome, rowsOf, type ClientExtraReport, type InstallerClient, type RegistryClient } from "../client.ts";

// Events, matchers, timeouts and status messages (part of the trusted bytes): the descriptor
// (src/hosts/descriptors/codex.ts).
const ROWS = rowsOf(CODEX);

const home: InstallerClient["home"] = (ctx) => absoluteOverride(ctx, "CODEX_HOME", path.join(ctx.home, ".codex"));

export const codex: RegistryClient = {
  name: CODEX.name,
  descriptor: CODEX,
  home,
  registry: {
    path: fileInHome(home, "hooks.json"),
    layout: "grouped",
    rows: ROWS,
    handler(row, binaryPath, platform) {
      const handler: Record<string, unknown> = {
        type: "command",
        command: `${posixQuote(binaryPath)} codex ${row.argvEvent}`,
      };
      if (platform === "win32") handler.commandWindows = `& ${powershellQuote(binaryPath)} codex ${row.argvEvent}`;
      handler.timeout = row.timeout;
      if (row.statusMessage !== undefined) handler.statusMessage = row.statusMessage;
      return handler;
    },
  },

  report(ctx, facts): ClientExtraReport {
    const dir = home(ctx);
    if (!dir.ok) return { lines: [], drifted: false, repairs: [], doctor: [] };
    const lines: string[] = [];
    const repairs: string[] = [];
    let drifted = false;
    const config = readCodexConfig(dir.path);
    if (config.kind === "unreadable")
      lines.push(`codex: ${shown(ctx, config.path)} ${config.problem}; its [hooks] tables were not checked`);
    const inToml = configTomlEntries(config, facts.stable);
    if (inToml.length > 0) {
      drifted = true;
      lines.push(
        `codex: velesdb-hooks entries also in ${shown(ctx, config.path)} [hooks] (${inToml.map((e) => e.event).join(", ")}); Codex runs those as well`,
      );
      repairs.push(
        `remove the velesdb-hooks entries from ${shown(ctx, config.path)} [hooks], then velesdb-hooks check --client codex`,
      );
    }
    const trust: EntryTrust[] = [
      ...trustOf(facts.owned, facts.registryPath, config, ctx.platform),
      ...trustOf(inToml, config.path, config, ctx.platform),
    ];
    const doctor = trust.map((t) => ({
      label: "trust:",
      text: `${printable(t.entry.event)} ${t.status} (${printable(path.basename(t.file))} ${printable(t.key.slice(t.file.length + 1))})`,
    }));
    if (trust.length === 0) doctor.push({ label: "trust:", text: "no velesdb-hooks entries for Codex to trust" });
    if (trust.some((t) => t.status !== "trusted")) {
      doctor.push({
        label: "",
        text: "Codex skips untrusted or modified entries without a word: open /hooks in Codex and trust them",
      });
    }
    return { lines, drifted, repairs, doctor };
  },

  alsoReads(ctx) {
    const dir = home(ctx);
    return dir.ok ? [codexConfigPath(dir.path)] : [];
  },

  // `[mcp_servers.<name>]` tables of config.toml; `codex mcp add` (0.169.0) appends exactly
  // `[mcp_servers.<name>]` + `command = "…"` (or `url = "…"`), and so do we.
  mcp: {
    files: [
      {
        label: "config.toml",
        scope: "user",
        path: fileInHome(home, "config.toml"),
        format: "toml",
        servers: () => ["mcp_servers"],
      },
    ],
    // Without arguments: the direct entry earlier installs wrote (`command` alone, as above);
    // the shared front's entry adds its `args` array.
    stdio: (command, args) => (args.length > 0 ? { command, args: [...args] } : { command }),
    url: (url) => ({ url }),
  },

  // Codex runs hooks from config.toml [hooks] too; entries of ours there keep the binary.
  alsoNamesBinary(ctx, stable) {
    const dir = home(ctx);
    if (!dir.ok) return undefined;
    const config = readCodexConfig(dir.path);
    return config.kind === "unreadable" || configTomlEntries(config, stable).length > 0 ? config.path : undefined;
  },

  afterWrite(ctx, facts) {
    const dir = home(ctx);
    if (!dir.ok) return [];
    const lines: string[] = [];
    const config = readCodexConfig(dir.path);
    if (facts.mode === "install") {
      // We never write approvals (that is the user's security decision), so install says it plainly.
      const waiting = trustOf(
        ownedEntries(facts.hooksAfter, facts.stable),
        facts.registryPath,
        config,
        ctx.platform,
      ).filter((t) => t.status !== "trusted");
      if (waiting.length === 0) lines.push("codex: every velesdb-hooks entry is trusted");
      else {
        lines.push(
          `codex: ${facts.dryRun ? "after this install, " : ""}Codex will skip ${waiting.map((t) => printable(t.entry.event)).join(", ")} until you trust ${waiting.length === 1 ? "it" : "them"}: start codex, open /hooks and trust the velesdb-hooks entries (install never approves hooks for you)`,
        );
      }
    }
    const inToml = configTomlEntries(config, facts.stable);
    if (inToml.length > 0) {
      lines.push(
        `codex: ${shown(ctx, config.path)} [hooks] also holds velesdb-hooks entries (${inToml.map((e) => e.event).join(", ")}); Codex runs those as well, and velesdb-hooks never edits config.toml: remove them there`,
      );
    }
    return lines;
  },
};
