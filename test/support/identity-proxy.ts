// A pass-through on 127.0.0.1 that asks its upstream for identity encoding:
//
//   bun test/support/identity-proxy.ts http://127.0.0.1:PORT   → prints the port it listens on
//
// Why: Verdaccio 6.8.0 compresses every response a client accepts gzip for (its app uses
// `compression()` unconditionally: verdaccio/build/api/index.js), tarballs included — measured,
// ~3 s of its CPU per 55 MB download, which npm then unzips twice. registry.npmjs.org sends a
// tarball's bytes as they are. test/npm-registry.test.ts has npm reach Verdaccio through this;
// method, path, headers, body and status pass unchanged. A process of its own: the test waits
// on npm with spawnSync, which would stall a server living in the test's own event loop.
const upstream = process.argv[2];
if (!upstream || !/^http:\/\/127\.0\.0\.1:[0-9]+$/.test(upstream)) {
  console.error("usage: bun test/support/identity-proxy.ts http://127.0.0.1:PORT");
  process.exit(2);
}

const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding"];

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  maxRequestBodySize: 1 << 30,
  async fetch(request) {
    const { pathname, search } = new URL(request.url);
    const headers = new Headers(request.headers);
    headers.set("accept-encoding", "identity");
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    const answer = await fetch(`${upstream}${pathname}${search}`, {
      method: request.method,
      headers,
      body,
      redirect: "manual",
    });
    const answerHeaders = new Headers(answer.headers);
    for (const name of HOP_BY_HOP) answerHeaders.delete(name);
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: answerHeaders });
  },
});
console.log(server.port);
