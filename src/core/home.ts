// The user's home directory, without importing node:os at the top of the bundle: every static
// import of a built-in is hoisted by `bun build --compile` and evaluated by every hook
// (test/hot-path.test.ts), and node:os costs about a millisecond on a ~5 ms hook. The
// environment answers in practice; the OS is asked only when it is silent.

/** homeDirectory(env) → $HOME (Windows: %USERPROFILE%), else what the OS reports. */
export function homeDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = process.platform === "win32" ? env.USERPROFILE || env.HOME : env.HOME;
  if (fromEnv) return fromEnv;
  const os = require("node:os") as typeof import("node:os");
  return os.homedir();
}
