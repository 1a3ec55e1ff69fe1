// Bash compression for hosts whose shell result is not Claude's `{stdout, stderr, interrupted,
// isImage}` object (Copilot's one string with a footer, OpenCode's `output`). The gates,
// watchdog, archive and footer are Claude's own (src/core/compress.ts, docs/contract.md §7, §8): each host
// hands over the text the model would read (or the file its host saved the whole output to),
// and puts the compiled view back in its own shape. The allowlist knob still speaks of `Bash`,
// as the one shell tool whose output shape is verified on every host that compresses.
import { compressBashThroughGates, readSettings } from "../core/compress-gates.ts";
import { pass, type Decision } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";

export interface ShellOutput {
  /** The output as the model would read it (without the host's own trailer). */
  readonly text: string;
  /** The host's file with the complete output, when the text is cut (absolute; never followed if a link). */
  readonly savedPath?: string;
  /**
   * True when the host deletes that file when its session ends (Copilot): its content is then
   * compiled and archived by us, so the path the footer names outlives the session.
   */
  readonly savedFileIsTemporary?: boolean;
}

export type ShellCompression = { readonly kind: "compiled"; readonly text: string; readonly note?: string } | { readonly kind: "untouched"; readonly decision: Decision };

/**
 * compressShellOutput(input, {text}) → the compiled view plus the archive footer, or the pass
 * (with its note) to answer instead. Recall evidence is the caller's business.
 */
export async function compressShellOutput(input: HookInput, output: ShellOutput): Promise<ShellCompression> {
  let text = output.text;
  let savedPath = output.savedPath;
  if (savedPath !== undefined && output.savedFileIsTemporary === true) {
    const knobs = readSettings(input.env);
    if (!knobs.ok) return { kind: "untouched", decision: pass(knobs.problem) };
    const { readPersistedOutput } = await import("../core/compress.ts");
    const read = readPersistedOutput(savedPath, knobs.settings.minBytes);
    if (read.kind === "refused") return { kind: "untouched", decision: pass(read.problem.replace("persistedOutputPath", "the host's saved output")) };
    if (read.kind === "small") return { kind: "untouched", decision: pass() };
    text = new TextDecoder().decode(read.bytes);
    savedPath = undefined;
  }
  const response = {
    stdout: text,
    stderr: "",
    interrupted: false,
    isImage: false,
    ...(savedPath === undefined ? {} : { persistedOutputPath: savedPath }),
  };
  // The payload-only gates first: a small output passes without loading the compressor.
  const decision = await compressBashThroughGates({ ...input, payload: { ...input.payload, tool_name: "Bash", tool_response: response } });
  if (decision.kind !== "replaceOutput") return { kind: "untouched", decision };
  const compiled = decision.toolResponse.stdout;
  if (typeof compiled !== "string") return { kind: "untouched", decision: pass("compression refused: no compiled text") };
  return { kind: "compiled", text: compiled, note: decision.note };
}
