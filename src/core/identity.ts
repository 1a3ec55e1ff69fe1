// Project identity (SPEC §3.2): which velesdb-memory project/session a directory belongs to,
// and whether that repository opted in to the learning loop. A user-wide install runs in
// every repository on the machine, so anything unexpected here fails open: no file, a file
// that is not a JSON object, or a field of the wrong type all mean "defaults, not enforced".
import * as fs from "node:fs";
import * as path from "node:path";

export const CONFIG_FILE_NAME = ".velesdb-hooks.json";
const MAX_DIRECTORIES_WALKED = 20;
export const DEFAULT_SESSION_SLOT = "rolling";

export interface ProjectIdentity {
  /** The velesdb-memory project: the config's `project`, else the start directory's basename. */
  readonly project: string;
  /** The working-context slot: the config's `session`, else "rolling" (one rolling state per project). */
  readonly session: string;
  /** Canonical directory holding the config file; "" when none applies. */
  readonly root: string;
  /** Only the JSON value `true` in `enforce_learning_loop` turns the guard on. */
  readonly enforceLearningLoop: boolean;
  /** The canonical start directory the walk began from. */
  readonly start: string;
  /** The config file found, even when it did not parse (doctor reports it). */
  readonly configPath: string;
  /** Why a found config file was ignored, when it was. */
  readonly configProblem: string;
}

/**
 * canonicalStartDirectory("/repo/link/new/file.ts") → the nearest existing ancestor, resolved
 * through symlinks. An edit through a symlinked directory must get the policy of the repository
 * whose bytes it touches, even for a file that does not exist yet.
 */
export function canonicalStartDirectory(start: string, baseDir: string = process.cwd()): string {
  let candidate = path.resolve(baseDir, start);
  for (let depth = 0; depth < 256; depth++) {
    try {
      if (fs.statSync(candidate).isDirectory()) return fs.realpathSync.native(candidate);
    } catch {
      // Missing or unreadable: try its parent.
    }
    const parent = path.dirname(candidate);
    if (parent === candidate) break;
    candidate = parent;
  }
  return candidate;
}

/** resolveProjectIdentity(dir) → identity from the first `.velesdb-hooks.json` within 20 directories up. */
export function resolveProjectIdentity(startDirectory: string, baseDir?: string): ProjectIdentity {
  const start = canonicalStartDirectory(startDirectory, baseDir);
  const defaults = {
    project: defaultProjectName(start),
    session: DEFAULT_SESSION_SLOT,
    root: "",
    enforceLearningLoop: false,
    start,
    configPath: "",
    configProblem: "",
  };
  let dir = start;
  for (let walked = 0; walked < MAX_DIRECTORIES_WALKED; walked++) {
    const candidate = path.join(dir, CONFIG_FILE_NAME);
    if (isRegularFile(candidate)) return identityFromConfig(candidate, dir, defaults);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return defaults;
}

function identityFromConfig(configPath: string, dir: string, defaults: ProjectIdentity): ProjectIdentity {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(configPath, "utf8"));
  } catch (error) {
    const problem = error instanceof SyntaxError ? "is not valid JSON" : "cannot be read";
    return { ...defaults, configPath, configProblem: problem };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ...defaults, configPath, configProblem: "is not a JSON object" };
  }
  const config = parsed as Record<string, unknown>;
  let root = dir;
  try {
    root = fs.realpathSync.native(dir);
  } catch {
    // `dir` came from a canonical walk already; keep it.
  }
  return {
    ...defaults,
    project: nonEmptyString(config.project) ?? defaults.project,
    session: nonEmptyString(config.session) ?? defaults.session,
    enforceLearningLoop: config.enforce_learning_loop === true,
    root,
    configPath,
  };
}

function defaultProjectName(start: string): string {
  // The filesystem root has no basename; name it rather than send an empty project.
  return path.basename(start) || "root";
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function isRegularFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
