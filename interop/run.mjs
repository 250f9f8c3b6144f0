// Interop check: the official TypeScript MCP SDK, a client tychora does not
// share code with, drives tychora over stdio and over Streamable HTTP. Every
// structuredContent must validate against the tool's advertised
// outputSchema (ajv, JSON Schema 2020-12); every failure must be the
// {"error":{"code","message"}} envelope. The stdio session is recorded as a
// tape, and tape play must give the same client the same answers with the
// owner gone and the index moved away.
//
// Usage: node run.mjs TYCHORA_BINARY
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv2020 from "ajv/dist/2020.js";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";

const bin = process.argv[2];
if (!bin) {
  console.error("usage: node run.mjs TYCHORA_BINARY");
  process.exit(2);
}

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail ? ": " + detail : ""}`);
  }
}

// A workspace whose ingest root holds a few files to index.
const root = mkdtempSync(join(tmpdir(), "tychora-interop-"));
const docs = join(root, "docs");
mkdirSync(docs);
writeFileSync(join(docs, "guide.md"), "# Install guide\n\nRun the installer, then configure the token budget.\n\n## Tokens\n\nBudgets are counted in tokens with o200k_base.\n");
writeFileSync(join(docs, "server.go"), "package server\n\n// ParseHTTPRequest parses a request line.\nfunc ParseHTTPRequest(line string) (string, error) {\n\treturn line, nil\n}\n");
const ws = join(root, ".tychora");
execFileSync(bin, ["--workspace", ws, "init"], { stdio: "ignore" });

const ajv = new Ajv2020({ strict: false, allErrors: true });

function envelope(res) {
  if (!res.isError) return null;
  try {
    const body = JSON.parse(res.content[0].text);
    return body.error;
  } catch {
    return undefined;
  }
}

// exercise runs the session; every answer goes to seen, when given, as
// JSON, so that two runs can be compared.
async function exercise(label, client, seen = []) {
  const { tools } = await client.listTools();
  seen.push(JSON.stringify(tools));
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const want = ["discover", "search", "inspect", "add_sources", "manage_job"];
  check(`${label}: tools/list has the five tools`, want.every((n) => byName[n]), tools.map((t) => t.name).join(","));
  for (const t of tools) {
    check(`${label}: ${t.name} input schema closes objects`, t.inputSchema?.additionalProperties === false);
    check(`${label}: ${t.name} has an outputSchema`, t.outputSchema?.type === "object");
  }
  const { resourceTemplates } = await client.listResourceTemplates();
  const uris = resourceTemplates.map((r) => r.uriTemplate).sort();
  check(`${label}: four resource templates`, uris.length === 4 && ["tychora://assets/{id}", "tychora://evidence/{id}", "tychora://kinds/{id}", "tychora://schemas/{name}"].every((u) => uris.includes(u)), uris.join(","));

  const validators = {};
  for (const t of tools) validators[t.name] = ajv.compile(t.outputSchema);

  async function call(name, args, expectOk = true) {
    const res = await client.callTool({ name, arguments: args });
    seen.push(JSON.stringify(res));
    if (res.isError) {
      const err = envelope(res);
      check(`${label}: ${name} error is the envelope`, err && typeof err.code === "string" && typeof err.message === "string" && res.structuredContent === undefined, JSON.stringify(res));
      if (expectOk) check(`${label}: ${name} ${JSON.stringify(args).slice(0, 60)}`, false, JSON.stringify(err));
      return { error: err };
    }
    const ok = validators[name](res.structuredContent);
    check(`${label}: ${name} structuredContent matches outputSchema`, ok, JSON.stringify(validators[name].errors));
    if (!expectOk) check(`${label}: ${name} was expected to fail`, false);
    return { value: res.structuredContent, res };
  }

  const add = await call("add_sources", { action: "add", source: { path: docs } });
  let job = add.value?.job;
  for (let i = 0; job && i < 200 && !["succeeded", "failed", "cancelled"].includes(job.state); i++) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await call("manage_job", { action: "get", job_id: job.id })).value?.job;
  }
  check(`${label}: the add job succeeded`, job?.state === "succeeded", JSON.stringify(job));
  await call("manage_job", { action: "list" });
  const srcs = await call("discover", { request: { subject: "sources" } });
  const sourceId = srcs.value?.items?.[0]?.id;
  check(`${label}: discover sources lists the source`, typeof sourceId === "string");
  for (const subject of ["kinds", "settings", "profiles", "languages", "models", "runs"]) {
    await call("discover", { request: { subject } });
  }
  const found = await call("search", { request: { question: "parse http request" } });
  check(`${label}: search finds ParseHTTPRequest`, found.value?.hits?.some((h) => h.path.endsWith("server.go")), JSON.stringify(found.value?.hits?.map((h) => h.path)));
  const rendered = await call("search", { request: { question: "token budget" }, render: "agent@1" });
  check(`${label}: a render adds one text block`, rendered.res?.content?.length === 1 && rendered.res.content[0].type === "text");
  if (sourceId) await call("inspect", { request: { subject: "source", source_id: sourceId } });
  const bad = await call("search", { request: { question: "x" }, bogus: 1 }, false);
  check(`${label}: an unknown field is INVALID_ARGUMENT`, bad.error?.code === "INVALID_ARGUMENT", JSON.stringify(bad.error));
  const kind = await client.readResource({ uri: "tychora://kinds/markdown" });
  check(`${label}: kinds resource reads`, kind.contents?.length === 1);
  const evid = found.value?.hits?.[0]?.evidence_id;
  if (evid) {
    const ev = await client.readResource({ uri: `tychora://evidence/${evid}` });
    check(`${label}: evidence resource reads`, ev.contents?.[0]?.text?.includes("ParseHTTPRequest") || ev.contents?.length === 1);
  }
  let notFound = false;
  try {
    await client.readResource({ uri: "tychora://evidence/nope" });
  } catch {
    notFound = true;
  }
  check(`${label}: an unknown evidence id fails`, notFound);
}

// stdio: the client starts tychora, which becomes the owner, and records
// the session as the tape "interop".
const stdio = new Client({ name: "tychora-interop", version: "1.0.0" });
await stdio.connect(new StdioClientTransport({ command: bin, args: ["--workspace", ws, "serve", "--stdio", "--record", "interop"], stderr: "inherit" }));
const live = [];
await exercise("stdio", stdio, live);

// HTTP: the same owner, reached with the token from endpoint.json.
const epPath = join(ws, ".runtime", "endpoint.json");
for (let i = 0; i < 100 && !existsSync(epPath); i++) await new Promise((r) => setTimeout(r, 50));
const ep = JSON.parse(readFileSync(epPath, "utf8"));
const http = new Client({ name: "tychora-interop-http", version: "1.0.0" });
await http.connect(new StreamableHTTPClientTransport(new URL(ep.mcp_url), { requestInit: { headers: { Authorization: `Bearer ${ep.token}` } } }));
await exercise("http", http);
await http.close();
await stdio.close();

// tape play: the same session replayed from the tape alone, with the owner
// gone and the index moved away, gives the same answers.
const indexPath = join(ws, "index.db");
for (let i = 0; i < 200 && existsSync(epPath); i++) await new Promise((r) => setTimeout(r, 50));
check("the stdio owner is gone", !existsSync(epPath));
renameSync(indexPath, indexPath + ".away");
const tape = new Client({ name: "tychora-interop-tape", version: "1.0.0" });
await tape.connect(new StdioClientTransport({ command: bin, args: ["--workspace", ws, "tape", "play", "interop"], stderr: "inherit" }));
const replayed = [];
await exercise("tape", tape, replayed);
await tape.close();
check("tape: the replay gives the recorded answers", replayed.length === live.length && replayed.every((r, i) => r === live[i]),
  `${replayed.length} answers, ${live.length} recorded; first difference at ${replayed.findIndex((r, i) => r !== live[i])}`);
check("tape: play opened no index", !existsSync(indexPath));
renameSync(indexPath + ".away", indexPath);

console.log(`\ninterop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
