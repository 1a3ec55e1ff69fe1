// What the installer accepts as `--mcp-url`, and how it shows any argument it refuses (docs/hardening.md §9).
// The URL is written verbatim into every agent's MCP file, so it is checked on its own text,
// not on what the WHATWG parser makes of it: the parser drops tabs and line breaks and trims
// control characters, so a newline passed the check and still went into the files (Codex then
// listed the server broken across two lines), and a DEL made the Codex step fail with a
// misleading "does not parse (line 4)". Decisions: docs/hardening.md.

/** A space, a line break, a C0/C1 control or DEL, the Unicode line and paragraph separators. */
const UNSAFE_CHARACTER = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** Hosts plain http:// may name: this machine, as install.sh and install.ps1 accept for their base URL. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * mcpUrlProblem(text) → why `--mcp-url text` cannot be registered, never quoting the text (it
 * may carry credentials); undefined when it can: an http(s) URL with no space or control
 * character, plain http only to a loopback host (a velesdb-memory daemon elsewhere answers
 * over the network, where plain HTTP shows every tool call and its answer to anyone on the path).
 */
export function mcpUrlProblem(text: string, example: string): string | undefined {
  const at = text.search(UNSAFE_CHARACTER);
  if (at >= 0)
    return `--mcp-url holds a space, a line break or another control character (character ${at + 1}); give the URL alone, such as ${example}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `--mcp-url needs an http:// or https:// URL, such as ${example}`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `--mcp-url needs an http:// or https:// URL, such as ${example}`;
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) {
    return `--mcp-url: plain http:// is accepted only to this machine (127.0.0.1, localhost, [::1]); use https:// for ${JSON.stringify(url.hostname)}`;
  }
  return undefined;
}

/**
 * shownArgument(arg) → the argument as a usage error may print it: `--flag=value` as
 * "--flag=…" (value not shown), a URL without its credentials, query and fragment, anything
 * else quoted as given (cut at 80 characters). `check --mcp-url=https://u:PW@h/?token=T`
 * printed the password and the token (docs/hardening.md §9).
 */
export function shownArgument(arg: string): string {
  const flag = /^(--?[A-Za-z0-9][A-Za-z0-9-]*)=/.exec(arg);
  if (flag) return `${JSON.stringify(`${flag[1]}=…`)} (value not shown)`;
  // Anything that may carry a credential or a token: a URL shown by host and path only, else not at all.
  if (/[@?#]|:\/\//.test(arg)) {
    try {
      const url = new URL(arg);
      if (url.host !== "")
        return `${JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`)} (credentials, query or fragment not shown)`;
    } catch {
      // Not a URL: not shown either.
    }
    return `(an argument of ${arg.length} characters, not shown)`;
  }
  return JSON.stringify(arg.length > 80 ? `${arg.slice(0, 80)}…` : arg);
}
