// Runs the official MCP conformance suite's server scenarios against
// tychora at every spec version it serves, over both transports:
// Streamable HTTP (/mcp/, session-based before 2026-07-28, stateless at
// it) and stdio (`tychora serve --stdio`, reached through a small bridge
// that carries each POSTed JSON-RPC body to a stdio process and its
// answers back as JSON). The suite sends no token, so a proxy in front of
// each adds the owner's. Scenarios that need the suite's own fixture
// tools, prompts or resources, and those that test what only HTTP has
// when run through the stdio bridge, are listed in expected-failures.yml;
// anything else that fails, and any listed entry that passes, fails the
// run.
//
// Usage: node run.mjs TYCHORA_BINARY   (with node >= 22 first on PATH)
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.argv[2];
if (!bin) {
  console.error("usage: node run.mjs TYCHORA_BINARY");
  process.exit(2);
}
// Every spec version the suite has scenarios for. (It has none for
// 2024-11-05, and its CLI refuses that version: the Go tests and
// interop/run.mjs cover it.)
const versions = (process.env.CONFORMANCE_VERSIONS || "2025-03-26 2025-06-18 2025-11-25 2026-07-28").split(" ");
const transports = (process.env.CONFORMANCE_TRANSPORTS || "http stdio").split(" ");

const root = mkdtempSync(join(tmpdir(), "tychora-conformance-"));
const docs = join(root, "docs");
mkdirSync(docs);
writeFileSync(join(docs, "guide.md"), "# Guide\n\nThe token budget.\n");
const ws = join(root, ".tychora");
execFileSync(bin, ["--workspace", ws, "init"], { stdio: "ignore" });

// The owner: `tychora serve --stdio` becomes it; its HTTP endpoint is in
// endpoint.json.
const owner = spawn(bin, ["--workspace", ws, "serve", "--stdio"], { stdio: ["pipe", "ignore", "inherit"] });
const epPath = join(ws, ".runtime", "endpoint.json");
for (let i = 0; i < 200 && !existsSync(epPath); i++) await new Promise((r) => setTimeout(r, 50));
const ep = JSON.parse(readFileSync(epPath, "utf8"));
const target = new URL(ep.mcp_url);

function listen(handler) {
  return new Promise((resolve) => {
    const srv = createServer(handler);
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

// The HTTP proxy: the request as it came, with the owner's token and, when
// the suite named the proxy itself, the owner's Host.
const proxy = await listen((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${ep.token}` };
  const self = [`127.0.0.1:${proxy.address().port}`, `localhost:${proxy.address().port}`];
  if (self.includes(headers.host)) headers.host = target.host;
  for (const h of self) if (headers.origin === `http://${h}`) headers.origin = `http://${target.host}`;
  const out = request({ host: target.hostname, port: target.port, method: req.method, path: target.pathname, headers }, (up) => {
    res.writeHead(up.statusCode, up.headers);
    up.pipe(res);
  });
  out.on("error", () => res.destroy());
  req.pipe(out);
});

// The stdio bridge: a session is one `tychora serve --stdio` process (a
// client of the owner), opened by an initialize; a request of 2026-07-28,
// which has no sessions, goes to a process of its own. Every request's
// answer, matched by id, is sent back as one JSON body.
class StdioPeer {
  constructor() {
    this.proc = spawn(bin, ["--workspace", ws, "serve", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
    this.waiting = new Map();
    createInterface({ input: this.proc.stdout }).on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        const w = this.waiting.get(JSON.stringify(m.id ?? null));
        if (w) w(m);
      }
    });
  }
  send(body) {
    const msgs = Array.isArray(body) ? body : [body];
    const answers = msgs
      .filter((m) => m && m.method && m.id !== undefined)
      .map((m) => new Promise((resolve) => this.waiting.set(JSON.stringify(m.id), (a) => {
        this.waiting.delete(JSON.stringify(m.id));
        resolve(a);
      })));
    this.proc.stdin.write(JSON.stringify(body) + "\n");
    return Promise.all(answers).then((as) => (Array.isArray(body) ? as : as[0]));
  }
  close() {
    this.proc.stdin.end();
  }
}
const sessions = new Map();
let nextSession = 1;
const bridge = await listen(async (req, res) => {
  if (req.method === "DELETE") {
    sessions.get(req.headers["mcp-session-id"])?.close();
    sessions.delete(req.headers["mcp-session-id"]);
    res.writeHead(200).end();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST, DELETE" }).end();
    return;
  }
  let data = "";
  for await (const chunk of req) data += chunk;
  let body;
  try {
    body = JSON.parse(data);
  } catch {
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
    return;
  }
  const msgs = Array.isArray(body) ? body : [body];
  let sid = req.headers["mcp-session-id"];
  let peer = sid && sessions.get(sid);
  const headers = { "content-type": "application/json" };
  if (sid && !peer) {
    res.writeHead(404, headers).end(JSON.stringify({ error: { code: "NOT_FOUND", message: "no such session" } }));
    return;
  }
  if (!peer && msgs.some((m) => m && m.method === "initialize")) {
    sid = String(nextSession++);
    peer = new StdioPeer();
    sessions.set(sid, peer);
  }
  let once = false;
  if (!peer) {
    peer = new StdioPeer();
    once = true;
  } else {
    headers["mcp-session-id"] = sid;
  }
  const answer = await peer.send(body);
  if (once) peer.close();
  if (answer === undefined || (Array.isArray(answer) && answer.length === 0)) {
    res.writeHead(202, headers).end();
    return;
  }
  res.writeHead(200, headers).end(JSON.stringify(answer));
});

// The stdio run expects the fixture failures and, besides, those of what
// only HTTP has, which the bridge does not carry.
const fixtures = readFileSync(join(here, "expected-failures.yml"), "utf8");
const httpOnly = readFileSync(join(here, "expected-failures-stdio.yml"), "utf8").replace(/^server:\s*$/m, "");
const baselines = { http: join(root, "expected-http.yml"), stdio: join(root, "expected-stdio.yml") };
writeFileSync(baselines.http, fixtures);
writeFileSync(baselines.stdio, fixtures.split("\n").filter((l) => !l.includes("# http only")).join("\n").trimEnd() + "\n" + httpOnly);
let failed = false;
for (const transport of transports) {
  const url = `http://127.0.0.1:${(transport === "http" ? proxy : bridge).address().port}/mcp/`;
  for (const version of versions) {
    const args = ["server", "--url", url, "--suite", "all", "--spec-version", version, "--expected-failures", baselines[transport], "-o", join(root, "results", transport, version)];
    console.log(`\n== conformance ${transport} ${version}`);
    const cli = spawn(process.execPath, [join(here, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"), ...args], { stdio: "inherit" });
    const code = await new Promise((resolve) => cli.on("exit", resolve));
    if (code !== 0) {
      console.log(`conformance ${transport} ${version}: exit ${code}`);
      failed = true;
    }
  }
}
for (const p of sessions.values()) p.close();
proxy.close();
bridge.close();
owner.stdin.end();
await new Promise((r) => owner.on("exit", r));
console.log(failed ? "\nconformance: FAILED" : "\nconformance: every scenario as expected");
process.exit(failed ? 1 : 0);
