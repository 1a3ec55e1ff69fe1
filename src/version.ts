// The version is stamped at build time (scripts/build.ts passes --define); a run from source
// says so instead of pretending to be a release.
declare const VELESDB_HOOKS_BUILD_VERSION: string | undefined;

export const VERSION: string =
  typeof VELESDB_HOOKS_BUILD_VERSION === "string" ? VELESDB_HOOKS_BUILD_VERSION : "0.0.0-source";
