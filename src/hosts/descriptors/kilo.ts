// Kilo Code CLI's hooks as data (docs/hosts/kilo.md; measured on @kilocode/cli-linux-x64 7.7.7).
// Kilo is a fork of OpenCode that loads the same plugin with the same callbacks and tool names
// (src/hosts/kilo.ts), so its descriptor is OpenCode's under its own name: the plugin's spawns
// name `kilo`, and its state is its own. The one descriptor that imports another: a difference
// measured on Kilo goes here as an override of OpenCode's field.
import type { HostDescriptor } from "./descriptor.ts";
import { OPENCODE } from "./opencode.ts";

export const KILO = { ...OPENCODE, name: "kilo" } as const satisfies HostDescriptor;
