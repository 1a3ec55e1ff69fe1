// Installer commands (SPEC §9). Loaded only by `install`, `uninstall`, `check` and `doctor`.
import { diagnosticLine } from "../core/decision.ts";
import * as fs from "node:fs";

export async function runInstallerCommand(command: string, _args: readonly string[]): Promise<number> {
  fs.writeSync(2, diagnosticLine(`${command} is not available in this build yet`));
  return 64;
}
