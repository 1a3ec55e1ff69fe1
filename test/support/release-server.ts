// A static file server on 127.0.0.1 for install.sh tests: URL prefixes map to directories, so
// one server can play a flat mirror (`/mirror/…`) and GitHub's release layout
// (`/acme/velesdb-hooks/releases/latest/download/…`, `…/releases/download/v0.1.0/…`). Every
// request is logged, which is how a test proves a script made none.
import * as fs from "node:fs";
import * as path from "node:path";

export interface ReleaseServer {
  readonly url: string;
  /** Request paths in arrival order. */
  readonly requests: string[];
  /** mount("/mirror", dir): serve dir's files under that prefix (replacing an earlier mount). */
  mount(prefix: string, dir: string): void;
  stop(): void;
}

/** startReleaseServer() → a server on an ephemeral port of 127.0.0.1; 404 for anything unmounted. */
export function startReleaseServer(): ReleaseServer {
  const mounts = new Map<string, string>();
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const urlPath = decodeURIComponent(new URL(request.url).pathname);
      requests.push(urlPath);
      for (const [prefix, dir] of mounts) {
        if (!urlPath.startsWith(`${prefix}/`)) continue;
        const name = urlPath.slice(prefix.length + 1);
        // Flat directories only: a name with a separator or a dot-dot never leaves `dir`.
        if (name === "" || name.includes("/") || name === "..") break;
        const file = path.join(dir, name);
        if (fs.existsSync(file) && fs.statSync(file).isFile()) return new Response(Bun.file(file));
        break;
      }
      return new Response("not found\n", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    mount(prefix, dir) {
      mounts.set(prefix.replace(/\/+$/, ""), dir);
    },
    stop() {
      server.stop(true);
    },
  };
}
