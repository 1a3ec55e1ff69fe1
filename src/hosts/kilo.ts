// Kilo Code CLI (measured on @kilocode/cli-linux-x64 7.7.7 — the platform binary run directly,
// since @kilocode/cli 7.8.1 pins platform packages this registry lacks — offline against a
// chat-completions mock through a custom `@ai-sdk/openai-compatible` provider in kilo.json).
// Kilo is a fork of OpenCode: the same plugin hooks with the same arguments, so the rules and
// the answers are OpenCode's (src/hosts/opencode.ts); only the state is Kilo's own. What
// differs, measured:
// - Plugins load from `plugin/*.js` in ~/.config/kilo (XDG_CONFIG_HOME respected), config
//   kilo.json, env prefix `KILO_` (`KILO_DISABLE_MODELS_FETCH`). MCP tools are named
//   `velesdb-memory_<tool>`, as on OpenCode.
// - `kilo run` exits at the first idle like `opencode run`: the Stop continuation (a prompt at
//   `session.idle`) is seen only by a long-lived process (`kilo serve` + `run --attach`, the TUI).
// - Every session start spends 9–11 s indexing the workspace before the first model request.
// - Kilo runs no Claude Code hooks: the binary holds no Claude hook event name
//   (`PreToolUse`, `hook_event_name`), and a hook in ~/.claude/settings.json never ran in a Kilo
//   session (test/hosts/kilo/kilo.e2e.test.ts). `KILO_DISABLE_CLAUDE_CODE` only turns off reading
//   ~/.claude/CLAUDE.md and ~/.claude/skills; an experimental migration
//   (`KILO_EXPERIMENTAL_CLAUDE_MIGRATION`) copies those and ~/.claude.json's MCP servers. So a
//   user with both Claude Code and Kilo gets each set of our hooks once.
import { KILO } from "./descriptors/kilo.ts";
import type { HostModule } from "./host.ts";
import { mcpToolOf, tempStateProfile } from "./host.ts";
import { opencode, opencodePostToolUse } from "./opencode.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { KILO };

export const kilo: HostModule = {
  ...opencode,
  descriptor: KILO,
  // The tools as the model calls them, `<server>_<tool>` as on OpenCode (test/hosts/kilo/kilo.e2e.test.ts).
  profile: { ...tempStateProfile("kilo", "kilo-", mcpToolOf(KILO)), contextResentEachRequest: true },
  events: {
    ...opencode.events,
    "post-tool-use": { ...opencode.events["post-tool-use"]!, run: opencodePostToolUse(KILO) },
  },
};
