// Claude Code (SPEC §4.1): ~/.claude/settings.json ($CLAUDE_CONFIG_DIR honoured), grouped
// handlers in the exec form — no shell, so no quoting, and it works on Windows.
import * as path from "node:path";
import { absoluteOverride } from "../paths.ts";
import { fileInHome, type InstallerClient, type RegistryClient, type Registration } from "./client.ts";

// PostToolUse compiles large Bash output, hence 30 s; everything else is local and fast.
const EDIT_TOOLS = "^(Edit|Write|NotebookEdit)$";
const POST_TOOLS = "^(Bash|mcp__(plugin_[^_]+_)?velesdb[-_]memory__.+)$";

const ROWS: readonly Registration[] = [
  { wireEvent: "SessionStart", argvEvent: "session-start", timeout: 10 },
  { wireEvent: "Stop", argvEvent: "stop", timeout: 10 },
  { wireEvent: "PreCompact", argvEvent: "pre-compact", timeout: 10 },
  { wireEvent: "PreToolUse", argvEvent: "pre-tool-use", matcher: EDIT_TOOLS, timeout: 10 },
  { wireEvent: "PostToolUse", argvEvent: "post-tool-use", matcher: POST_TOOLS, timeout: 30 },
];

const home: InstallerClient["home"] = (ctx) => absoluteOverride(ctx, "CLAUDE_CONFIG_DIR", path.join(ctx.home, ".claude"));

export const claude: RegistryClient = {
  name: "claude",
  home,
  registry: {
    path: fileInHome(home, "settings.json"),
    layout: "grouped",
    rows: ROWS,
    handler: (row, binaryPath) => ({ type: "command", command: binaryPath, args: ["claude", row.argvEvent], timeout: row.timeout }),
  },
};
