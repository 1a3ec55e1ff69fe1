// A long-lived Claude Code's ~/.claude.json, for the installer's size and race tests
// (docs/hardening.md §2, §8): a trial found 41 MB and 60 MB files in real homes. The shape is Claude Code's
// own global config — every field name below occurs in the claude-code 2.1.328 binary installed by
// scripts/install-e2e-hosts.ts (test/e2e/node_modules/@anthropic-ai/claude-code-linux-x64) —:
// a few account and tip fields at the top, then `projects`, one entry per working directory the
// user ever started Claude in, each with its prompt `history` (up to 100 entries, some with
// pasted text: logs, diffs, code) and its last session's counters. Claude writes it with
// two-space indentation and no trailing newline. Its content (prompts, pasted logs and
// code) is drawn from a seeded generator, so a size always gives the same bytes.
import { seeded } from "../../support/seeded.ts";

const WORDS = (
  "the a to of in and for with on is it this that test fix add remove update refactor function file error build install " +
  "hook config session server memory context recall checkpoint async await return type interface module import export " +
  "why does fails when run please can you make sure tests pass check lint format rename move split merge branch commit " +
  "review diff log trace stack timeout retry cache index query parse schema migrate deploy release version bump docs"
).split(" ");
const IDENT = "abcdefghijklmnopqrstuvwxyz";

export function realisticClaudeJson(targetBytes: number, seed = 30): string {
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const int = (max: number) => Math.floor(random() * max);
  const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(4)]}${hex(3)}-${hex(12)}`;
  const ident = () => Array.from({ length: 3 + int(9) }, () => IDENT[int(26)]).join("");
  const sentence = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(" ");
  const pastedLine = (): string => {
    switch (int(4)) {
      case 0:
        return `    at ${ident()}.${ident()} (/home/dev/src/${ident()}/${ident()}.ts:${1 + int(900)}:${1 + int(80)})`;
      case 1:
        return `${pick(["+", "-", " "])}  const ${ident()} = await ${ident()}(${ident()}, ${int(1000)});`;
      case 2:
        return `${new Date(1_760_000_000_000 + int(1e10)).toISOString()} ${pick(["INFO", "WARN", "ERROR", "DEBUG"])} ${ident()}: ${sentence(6 + int(10))}`;
      default:
        return `error TS${2300 + int(400)}: ${sentence(5 + int(8))} '${ident()}'.`;
    }
  };
  const historyEntry = () => {
    const pasted = random() < 0.25;
    const content = pasted ? Array.from({ length: 5 + int(40) }, pastedLine).join("\n") : "";
    return {
      display: pasted
        ? `${sentence(4 + int(20))} [Pasted text #1 +${content.split("\n").length} lines]`
        : sentence(3 + int(40)),
      pastedContents: pasted ? { "1": { id: 1, type: "text", content } } : {},
    };
  };
  const project = () => ({
    allowedTools: random() < 0.3 ? [`Bash(npm run ${ident()}:*)`, `Bash(git ${ident()}:*)`] : [],
    history: [] as Array<ReturnType<typeof historyEntry>>,
    mcpContextUris: [],
    mcpServers: {},
    enabledMcpjsonServers: [],
    disabledMcpjsonServers: [],
    hasTrustDialogAccepted: random() < 0.9,
    projectOnboardingSeenCount: int(5),
    hasClaudeMdExternalIncludesApproved: false,
    hasClaudeMdExternalIncludesWarningShown: false,
    lastCost: Math.round(random() * 500) / 100,
    lastAPIDuration: int(600_000),
    lastDuration: int(3_600_000),
    lastLinesAdded: int(900),
    lastLinesRemoved: int(400),
    lastTotalInputTokens: int(2_000_000),
    lastTotalOutputTokens: int(200_000),
    lastTotalCacheCreationInputTokens: int(500_000),
    lastTotalCacheReadInputTokens: int(9_000_000),
    lastTotalWebSearchRequests: 0,
    lastModelUsage: {
      "claude-sonnet-4-5-20250929": {
        inputTokens: int(90_000),
        outputTokens: int(40_000),
        cacheReadInputTokens: int(4_000_000),
        cacheCreationInputTokens: int(300_000),
        webSearchRequests: 0,
        costUSD: Math.round(random() * 900) / 100,
      },
    },
    lastSessionId: uuid(),
    exampleFiles: [`${ident()}.ts`, `${ident()}.ts`, `${ident()}.md`],
    exampleFilesGeneratedAt: 1_760_000_000_000 + int(1e10),
  });
  const config = {
    numStartups: 1200 + int(4000),
    installMethod: "native",
    autoUpdates: true,
    theme: "dark",
    userID: hex(64),
    firstStartTime: "2025-03-01T09:12:44.118Z",
    hasCompletedOnboarding: true,
    lastOnboardingVersion: "2.1.328",
    oauthAccount: {
      accountUuid: uuid(),
      emailAddress: "dev@example.invalid",
      organizationUuid: uuid(),
      organizationRole: "admin",
      workspaceRole: null,
      organizationName: "dev's Organization",
    },
    tipsHistory: Object.fromEntries(
      [
        "new-user-warmup",
        "shift-enter",
        "memory-command",
        "theme-command",
        "prompt-queue",
        "git-worktrees",
        "todo-list",
        "custom-commands",
      ].map((tip) => [tip, int(3000)]),
    ),
    cachedChangelog: Array.from(
      { length: 300 },
      (_, i) => `## 2.${Math.floor(i / 100)}.${i % 100}\n\n- ${sentence(10)}\n- ${sentence(14)}`,
    ).join("\n\n"),
    projects: {} as Record<string, ReturnType<typeof project>>,
    mcpServers: {},
  };
  // Grow project by project (full histories first) until the file reaches its size.
  let size = JSON.stringify(config, null, 2).length;
  while (size < targetBytes) {
    const dir = `/home/dev/src/${ident()}-${ident()}${random() < 0.3 ? `/packages/${ident()}` : ""}`;
    const entry = project();
    const entries = 100 - (random() < 0.3 ? int(90) : 0);
    for (let i = 0; i < entries && size < targetBytes; i++) {
      const item = historyEntry();
      entry.history.push(item);
      size += JSON.stringify(item, null, 2).length + 8;
    }
    config.projects[dir] = entry;
    size += 1400;
  }
  return JSON.stringify(config, null, 2);
}
