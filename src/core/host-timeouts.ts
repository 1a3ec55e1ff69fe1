// The PostToolUse timeout each host is registered with, in seconds (the installer writes these:
// src/install/clients/claude.ts, codex.ts, copilot.ts, and the OpenCode plugin's spawn bound in
// opencode-plugin.ts), and the deadline compression keeps inside it. A host kills a hook at its
// timeout; killed, the hook answers nothing and the output passes as it was, but what it started
// must not outlive it (docs/compression.md#host-deadlines-and-a-killed-hook: Codex, Copilot and OpenCode are registered at 10 s while
// compression kept a 25 s deadline sized for Claude's 30 s). One table, read by both sides.

export const POST_TOOL_USE_TIMEOUT_S = {
  claude: 30,
  codex: 10,
  copilot: 10,
  opencode: 10,
  // The spawn bound of Kilo's plugin (OpenCode's, src/install/clients/kilo.ts) and of Pi's
  // extension (src/install/clients/pi-extension.ts).
  kilo: 10,
  pi: 10,
} as const;

export type CompressingHost = keyof typeof POST_TOOL_USE_TIMEOUT_S;

/**
 * compressionDeadlineMs("codex") → 8333: five sixths of the registered timeout, in ms. The sixth
 * left (1.7 s of 10, 5 s of 30) covers the hook's start-up, the archive, the answer and a loaded
 * machine; the compiler is bounded by what remains before it (compress.ts).
 */
export function compressionDeadlineMs(host: CompressingHost): number {
  return Math.floor((POST_TOOL_USE_TIMEOUT_S[host] * 1000 * 5) / 6);
}
