// Gemini CLI: ~/.gemini/settings.json (`$GEMINI_CLI_HOME/.gemini` when that is set: the CLI
// reads it as its home directory), grouped handlers under `hooks`. What shapes the entries
// (measured on @google/gemini-cli 0.61.0; see src/hosts/gemini.ts):
// - `timeout` is in MILLISECONDS: a timeout of 10 killed the hook after 10 ms.
// - The command runs through a shell: `bash -c` on Unix, `powershell -Command` on Windows
//   (with `; if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }` appended). The path is
//   POSIX-quoted on Unix and called with `& '…'` on Windows, where a quoted path alone is a
//   string, not a command.
// - A non-JSON answer with an exit code other than 0 or 1 DENIES the tool, and bash answers a
//   missing program with exit 127: an entry whose binary is gone refuses every write_file and
//   replace. install always places the binary before registering it; check and doctor say so
//   loudly when it is missing.
// - The CLI rewrites settings.json itself when it migrates a deprecated key (indentation,
//   key order), so "installed" is judged on parsed entries, never on bytes (the pipeline's rule).
// - `hooksConfig.enabled: false` turns every hook off, and `hooksConfig.disabled` lists hook
//   names to skip: both are reported, never edited.
import * as path from "node:path";
import { getNodeValue } from "jsonc-parser";
import { isExecutableFile } from "../../core/compiler.ts";
import { isJsonObject } from "../entries/entries.ts";
import { nodeAt } from "../files/jsonc-edit.ts";
import { absoluteOverride, ourTree, shown } from "../paths.ts";
import { readUserFile } from "../files/safe-read.ts";
import { posixQuote, powershellCall } from "../entries/shell-words.ts";
import { GEMINI } from "../../hosts/gemini.ts";
import {
  fileInHome,
  rowsOf,
  type ClientExtraReport,
  type InstallerClient,
  type RegistryClient,
  type Registration,
} from "../client.ts";

// Events, matchers (anchored: Gemini's are unanchored regexes) and timeouts: the descriptor
// (src/hosts/descriptors/gemini.ts).
const ROWS = rowsOf(GEMINI);

const home: InstallerClient["home"] = (ctx) => {
  const base = absoluteOverride(ctx, "GEMINI_CLI_HOME", ctx.home);
  return base.ok ? { ok: true, path: path.join(base.path, ".gemini") } : base;
};

/** The hook names Gemini shows in its warnings and matches against `hooksConfig.disabled`. */
const hookName = (row: Registration): string => `velesdb-hooks ${row.argvEvent}`;

export const gemini: RegistryClient = {
  name: GEMINI.name,
  descriptor: GEMINI,
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler(row, binaryPath, platform) {
      const program = platform === "win32" ? powershellCall(binaryPath) : posixQuote(binaryPath);
      return {
        type: "command",
        name: hookName(row),
        command: `${program} gemini ${row.argvEvent}`,
        timeout: (row.timeout ?? 10) * 1000,
      };
    },
  },
  // settings.json `mcpServers` (the hooks' own file); `httpUrl` is its streamable-HTTP form.
  mcp: {
    files: [
      {
        label: "settings.json",
        scope: "user",
        path: fileInHome(home, "settings.json"),
        format: "json",
        servers: () => ["mcpServers"],
      },
    ],
    stdio: (command, args) => ({ command, args: [...args] }),
    url: (url) => ({ httpUrl: url }),
  },

  report(ctx, facts): ClientExtraReport {
    const lines: string[] = [];
    let drifted = false;
    if (facts.owned.length > 0 && !isExecutableFile(facts.stable)) {
      drifted = true;
      lines.push(
        `gemini: WARNING: the registered binary ${shown(ctx, facts.stable)} is missing or not executable, and Gemini CLI DENIES every write_file and replace while its hook cannot run`,
      );
    }
    // Read again for the switches next to `hooks`; an unreadable file was reported already.
    const tree = ourTree(ctx);
    const file = tree.ok ? readUserFile(facts.registryPath, tree.path) : undefined;
    const node = file?.kind === "present" ? nodeAt(file.text.replace(/^\uFEFF/, ""), ["hooksConfig"]) : undefined;
    const value: unknown = node ? getNodeValue(node) : undefined;
    const hooksConfig = isJsonObject(value) ? value : undefined;
    if (hooksConfig?.enabled === false) {
      lines.push(
        `gemini: hooksConfig.enabled is false in ${shown(ctx, facts.registryPath)}: Gemini CLI runs no hook at all`,
      );
    }
    const disabled = Array.isArray(hooksConfig?.disabled) ? hooksConfig.disabled : [];
    const ours = ROWS.map(hookName).filter((name) => disabled.includes(name));
    if (ours.length > 0) lines.push(`gemini: hooksConfig.disabled skips ${ours.join(", ")}`);
    // The binary's absence already asks for `install --client gemini` as its repair.
    return { lines, drifted, repairs: [], doctor: [] };
  },
};
