// Preloaded by `bun test` (bunfig.toml): a top-level afterAll here runs once, after the last
// test file, which is when a build shared by several files may go (bun test runs no exit handlers).
import { afterAll } from "bun:test";
import { removeSharedReleaseBuild } from "./release-build.ts";

afterAll(removeSharedReleaseBuild);
