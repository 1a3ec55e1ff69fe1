// Registry files as users really have them: comments, odd indentation, CRLF, trailing commas,
// other tools' hooks — including one sharing a group with an old velesdb entry — and the
// bash reference's own entries. Each fixture says whether it holds entries of ours, so a test
// knows whether `uninstall` alone must leave it byte-identical.

/** The bash reference's global snippet (seed 000), as users pasted it. */
export const BASH_REFERENCE_SETTINGS = `{
  "hooks": {
    "SessionStart": [
      { "hooks": [{ "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/session-start.sh'" }] }
    ],
    "Stop": [
      { "hooks": [{ "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/stop.sh'" }] }
    ],
    "PreCompact": [
      { "hooks": [{ "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/pre-compact.sh'" }] }
    ],
    "PreToolUse": [
      { "matcher": "^(Edit|Write)$", "hooks": [{ "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/pre-tool-use.sh'" }] }
    ],
    "PostToolUse": [
      { "hooks": [{ "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/post-tool-use.sh'" }] }
    ]
  }
}
`;

export interface RegistryFixture {
  readonly name: string;
  readonly text: string;
  /** True when the fixture already holds entries of ours (legacy bash ones). */
  readonly hasOurs: boolean;
  /** Bytes of foreign content that must survive every operation verbatim. */
  readonly foreign: readonly string[];
}

export const CLAUDE_FIXTURES: readonly RegistryFixture[] = [
  {
    name: "comments, 3-space indentation, a foreign hook sharing a group with a bash entry",
    hasOurs: true,
    text: `{
   // personal settings — keep this comment
   "model": "opus",
   "hooks": {
      "Stop": [
         { "hooks": [ { "type": "command", "command": "bash '/Users/you/.claude/hooks/velesdb-memory/stop.sh'" }, {"type": "command",   "command": "say done"} ] }
      ],
      /* notifications go to my phone */
      "Notification": [ {"hooks": [{"type":"command","command":"notify-send hi"}]} ],
      "PreToolUse": [
         {
            "matcher": "Bash",
            "hooks": [ { "type": "command", "command": "~/bin/guard.sh", "timeout": 5 } ]
         }
      ]
   },
   "permissions": { "allow": [ "Bash(ls:*)" ] }
}
`,
    foreign: [
      "// personal settings — keep this comment",
      `{"type": "command",   "command": "say done"}`,
      "/* notifications go to my phone */",
      `"Notification": [ {"hooks": [{"type":"command","command":"notify-send hi"}]} ]`,
      `"hooks": [ { "type": "command", "command": "~/bin/guard.sh", "timeout": 5 } ]`,
      `"permissions": { "allow": [ "Bash(ls:*)" ] }`,
    ],
  },
  {
    name: "tabs and CRLF line endings, no hooks yet",
    hasOurs: false,
    text: '{\r\n\t"theme": "dark",\r\n\t"env": {\r\n\t\t"FOO": "1"\r\n\t}\r\n}\r\n',
    foreign: ['\t"theme": "dark",\r\n', '\t"env": {\r\n\t\t"FOO": "1"\r\n\t}'],
  },
  {
    name: "one compact line with foreign hooks",
    hasOurs: false,
    text: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo bye"}]}],"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"echo hi"}]}]},"model":"sonnet"}`,
    foreign: [
      `{"hooks":[{"type":"command","command":"echo bye"}]}`,
      `{"matcher":"startup","hooks":[{"type":"command","command":"echo hi"}]}`,
    ],
  },
  {
    name: "JSONC trailing commas and a comment inside hooks",
    hasOurs: false,
    text: `{
    "hooks": {
        // mine
        "PostToolUse": [
            { "matcher": "Write", "hooks": [ { "type": "command", "command": "prettier --write" }, ], },
        ],
    },
}
`,
    foreign: [
      "// mine",
      `{ "matcher": "Write", "hooks": [ { "type": "command", "command": "prettier --write" }, ], },`,
    ],
  },
  {
    name: "an empty object",
    hasOurs: false,
    text: "{}\n",
    foreign: [],
  },
  {
    name: "the bash reference's own snippet",
    hasOurs: true,
    text: BASH_REFERENCE_SETTINGS,
    foreign: [],
  },
];

/** A value that must never be printed: the registry content stays private. */
export const PLANTED_SECRET = "sk-live-PLANTED-0123456789-never-print-me";

/** The bash reference's Windsurf snippet (seed 000), with a foreign hook beside it. */
export const WINDSURF_BASH_REFERENCE = `{
  "hooks": {
    "pre_user_prompt": [
      { "command": "bash /Users/you/.codeium/windsurf/hooks/velesdb-memory/pre-user-prompt.sh", "show_output": true },
      { "command": "python3 ~/bin/log-prompt.py", "show_output": false }
    ]
  }
}
`;

export const WINDSURF_FIXTURES: readonly RegistryFixture[] = [
  {
    name: "foreign hooks on our events and others, four-space indentation",
    hasOurs: false,
    text: `{
    "hooks": {
        "pre_write_code": [
            { "command": "~/bin/lint-guard.sh", "show_output": true }
        ],
        "post_cascade_response": [ { "command": "notify-send done" } ]
    }
}
`,
    foreign: [
      `{ "command": "~/bin/lint-guard.sh", "show_output": true }`,
      `"post_cascade_response": [ { "command": "notify-send done" } ]`,
    ],
  },
  {
    name: "the bash reference's entry next to a foreign one",
    hasOurs: true,
    text: WINDSURF_BASH_REFERENCE,
    foreign: [`{ "command": "python3 ~/bin/log-prompt.py", "show_output": false }`],
  },
  {
    name: "one compact line, a look-alike path that is not the bash tree",
    hasOurs: false,
    text: `{"hooks":{"pre_user_prompt":[{"command":"bash /u/.codeium/windsurf/hooks/velesdb-memory-fork/x.sh","show_output":true}]}}`,
    foreign: [`{"command":"bash /u/.codeium/windsurf/hooks/velesdb-memory-fork/x.sh","show_output":true}`],
  },
  {
    name: "an empty object",
    hasOurs: false,
    text: "{}\n",
    foreign: [],
  },
];

/** User content of ~/.codeium/windsurf/memories/global_rules.md as people have it. */
export const RULES_FIXTURES: ReadonlyArray<readonly [string, string]> = [
  ["text ending with a newline", "# My rules\n\n- Prefer small commits.\n- Answer in English.\n"],
  ["text without a final newline", "- Prefer small commits.\n- Answer in English."],
  ["text ending with a blank line", "- Prefer small commits.\n\n"],
  ["CRLF line endings", "# Rules\r\n- one\r\n- two\r\n"],
  ["CRLF without a final line break", "# Rules\r\n- one"],
  ["a single newline", "\n"],
  ["an empty file", ""],
  ["non-ASCII text and a lookalike comment", "règle — toujours <!-- velesdb-hooks is great -->\n"],
];
