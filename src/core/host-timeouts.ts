// The deadline compression keeps inside the PostToolUse timeout a host is registered with. The
// timeouts themselves are each host's descriptor (src/hosts/descriptors/<host>.ts, `timeoutS` of
// its post-tool-use event): the installer writes them from there and the host module passes its
// own here, so the two sides read one number. A host kills a hook at its timeout; killed, the hook
// answers nothing and the output passes as it was, but what it started must not outlive it (Codex,
// Copilot and OpenCode are registered at 10 s while compression once kept a 25 s deadline sized
// for Claude's 30 s: docs/compression.md#host-deadlines-and-a-killed-hook).

/**
 * compressionDeadlineMs(10) → 8333: five sixths of the registered timeout (seconds), in ms. The
 * sixth left (1.7 s of 10, 5 s of 30) covers the hook's start-up, the archive, the answer and a
 * loaded machine; the compiler is bounded by what remains before it (compress.ts).
 */
export function compressionDeadlineMs(timeoutS: number): number {
  return Math.floor((timeoutS * 1000 * 5) / 6);
}
