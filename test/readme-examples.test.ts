// Every README example pasted as written keeps working (issue 40): the fenced blocks of README.md, then of the
// operator's guide it leads to (docs/guide.md), run in that order against `npm run demo` on 127.0.0.1. What a user would change is all that changes: the demo's address for
// http://127.0.0.1:8080 (it listens on a free port here), $KEY and the admin token from the `export` lines it prints,
// and an id a block names as `key_...`, `ws_...`, `whep_...` or `user_...` by the one an earlier command printed (one
// block also names a model the demo serves, said below). `npm run admin` acts on the database the demo serves through
// the `export GATEWAY_CONFIG=...` line the demo prints, pasted as the README says (issue 49). `npm run admin -- ...`
// runs as what npm runs for it, `node dist/cli/admin.js ...` (which checks its own build against src/ each time):
// thirty-odd npm launches were most of this file's time. The TypeScript and JavaScript
// snippets are type-checked and run. Each block is listed below by its first line, run or left out with the reason; a
// block that is not listed fails the test, so a new example is either run or explained.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

interface Block {
  lang: string;
  text: string;
  /** `file:line` of its opening fence. */
  line: string;
}

type Plan = { run: 'shell' | 'ts' | 'webhook-verify' | 'demo'; replace?: Record<string, string>; because?: string } | { skip: string };

const OUTPUT = 'what a command prints or a config excerpt, not a command';
const plans: Record<string, Plan> = {
  'npm install': { skip: 'installs the packages this test runs on; npm start itself is test/compiled-start.test.ts' },
  '==============================================================================': { skip: OUTPUT },
  'OPENAI_API_KEY=sk-... ANTHROPIC_API_KEY=sk-ant-... npm start': { skip: 'needs real provider keys and port 8080' },
  'npm run demo': { run: 'demo' },
  'curl -s http://127.0.0.1:8080/api/v1/chat/completions \\': { run: 'shell' },
  'curl -s http://127.0.0.1:8080/api/v1/responses \\': { run: 'shell' },
  "import OpenAI from 'openai';": { run: 'ts' },
  "import Anthropic from '@anthropic-ai/sdk';": { run: 'ts' },
  'npm run admin -- workspace create team': { run: 'shell' },
  'npm run admin -- workspace create acme': { run: 'shell' },
  'npm run admin -- key create --workspace acme --spend-cap 5.00 --period daily': { run: 'shell' },
  'npm run admin -- admin-token create --id ops': { run: 'shell' },
  'admin token ops: gwadm_...': { skip: OUTPUT },
  'admin:': { skip: OUTPUT },
  'export ADMIN="Authorization: Bearer gwadm_..."; GW=http://127.0.0.1:8080/admin/v1': { run: 'shell' },
  '# Workspaces: list, create (with an optional cap in USD), change the cap': {
    run: 'shell',
    replace: { 'gpt-6-sol': 'demo-chat' },
    because: 'a cap through the API names a model the gateway serves, and the demo serves no OpenAI model',
  },
  'curl -s -H "$ADMIN" "$GW/workspaces/ws_.../requests?status=error&since=2026-11-01&limit=50"': { run: 'shell' },
  'credential:': { skip: 'a channel file excerpt for a vendor that does not exist' },
  'POST /hooks/gateway HTTP/1.1': { skip: 'an HTTP request the gateway sends, not a command' },
  'curl -s -H "$ADMIN" -H \'content-type: application/json\' -d \'{"url":"https://example.com/hooks/gateway","events":["video.completed","video.failed"]}\' $GW/workspaces/ws_.../webhooks': { run: 'shell' },
  'npm run admin -- webhook create --workspace acme --url https://example.com/hooks/gateway --events video.completed,video.failed': { run: 'shell' },
  "import { createHmac, timingSafeEqual } from 'node:crypto';": { run: 'webhook-verify' },
  "The owner's dashboard password, within 7 days (one-time link):": { skip: OUTPUT },
  'npm run admin -- user create --email ann@example.com --workspace default --role member   # prints her one-time link (24 h)': { run: 'shell' },
  'dashboard:': { skip: 'a config excerpt that needs an OpenID provider; test/dashboard-sso.test.ts runs one' },
  '# channels/acme.yaml': { skip: 'a channel file for a vendor that does not exist' },
  'npm test               # vitest: every layer below, every endpoint through HTTP against fake upstreams on 127.0.0.1': { skip: 'runs the test suites themselves' },
  'cp deploy/env.example .env && docker compose up -d --build': { skip: 'docker; npm run test:container runs the compose fleet under podman' },
  '# overlay/channels/team-vllm.yaml': { skip: 'a channel file for the overlay folder of a container; test/operator-setup.test.ts checks what compose mounts' },
  'npm run admin -- reload                    # signals the gateway named in storage.dataDir/gateway.pid, prints what it applied or refused': {
    skip: 'signals the gateway of the embedded defaults (data/gateway.pid) and compose replicas; test/startup.test.ts reloads',
  },
  'sqlite3 data/gateway.db ".backup \'gateway-backup.db\'"        # with the sqlite3 tool; or, with what npm install brought:': {
    skip: "reads the embedded defaults' data/ folder of the repository, which a test must not touch",
  },
  'pg_dump --format=custom --file=gateway.dump "$DATABASE_URL"': { skip: 'needs pg_dump and the compose fleet' },
  'storage:': { skip: 'needs PostgreSQL, S3 and Redis: test/container/compose.test.ts' },
  'telemetry:': { skip: 'needs an OpenTelemetry collector: test/telemetry-otlp.test.ts' },
};

/** The fenced blocks of a Markdown file, with their language and line. */
function fencedBlocks(file: string): Block[] {
  const markdown = readFileSync(join(repoRoot, file), 'utf8');
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ lang: open[1], text: lines.slice(i + 1, end).join('\n'), line: `${file}:${i + 1}` });
    i = end;
  }
  return blocks;
}

const firstLine = (block: Block) => block.text.split('\n').find((l) => l.trim())!.trimEnd();
const blocks = ['README.md', 'docs/guide.md'].flatMap(fencedBlocks);

let demo: ChildProcess | undefined;
let dataDir = '';
let url = '';
let key = '';
let adminToken = '';
/** The shell variables blocks have set so far (`export ADMIN=...; GW=...`), as a user's shell keeps them. */
const session: string[] = [];
/** Ids printed so far, by prefix: a block's `key_...` means the latest key id a command printed. */
const ids = new Map<string, string>();

beforeAll(async () => {
  // dist/ as src/ says, once here rather than in the first command the README runs.
  expect(spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: repoRoot, stdio: 'inherit' }).status).toBe(0);
  dataDir = mkdtempSync(join(tmpdir(), 'readme-demo-'));
  demo = spawn('npm', ['run', 'demo'], { cwd: repoRoot, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DEMO_DATA_DIR: dataDir, NO_COLOR: '1' }, detached: true });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    demo!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ctrl-C to stop.')) resolve();
    });
    demo!.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    demo!.once('exit', (code) => reject(new Error(`npm run demo exited with ${code}:\n${out}`)));
  });
  url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
  key = /^ {2}export KEY=(sk-gw-[\w-]+)$/m.exec(out)![1];
  adminToken = /^ {2}export ADMIN="Authorization: Bearer (gwadm_[\w-]+)"; GW=http:\/\/127\.0\.0\.1:\d+\/admin\/v1$/m.exec(out)![1];
  // The line the README says to paste, so the CLI acts on the demo's database.
  session.push(/^ {2}(export GATEWAY_CONFIG=\S+ DEMO_DATA_DIR=\S+)$/m.exec(out)![1]);
  expect(out).toMatch(new RegExp(`Dashboard: ${url}/dashboard \\(.*${url}/dashboard/setup\\?token=`));
}, 120_000);

afterAll(async () => {
  // The demo writes its database as it stops: its folder is removed once it has exited (it raced the removal: ENOTEMPTY).
  if (demo?.pid && demo.exitCode === null) {
    const exited = new Promise((resolve) => demo!.once('exit', resolve));
    process.kill(-demo.pid, 'SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
}, 20_000);

/** The environment without what says which gateway to act on: only the demo's pasted export line says it. */
function withoutGatewayEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GATEWAY_CONFIG: _config, DEMO_DATA_DIR: _data, ...rest } = env;
  return rest;
}

/** One command per line, `\` continuations joined; blank and comment-only lines dropped. */
function commands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'));
}

/** The block's command as a user pastes it here: the demo's address and the ids earlier commands printed. */
function substitute(command: string, replace: Record<string, string> = {}): string {
  let text = command.replaceAll('http://127.0.0.1:8080', url).replaceAll('gwadm_...', adminToken).replace(/^npm run admin -- /, 'node dist/cli/admin.js ');
  for (const [from, to] of Object.entries(replace)) text = text.replaceAll(from, to);
  for (const prefix of ['key', 'ws', 'whep', 'user']) {
    if (text.includes(`${prefix}_...`)) {
      const id = ids.get(prefix);
      if (!id) throw new Error(`"${command}" names ${prefix}_... before any command printed one`);
      text = text.replaceAll(`${prefix}_...`, id);
    }
  }
  return text;
}

function runShell(block: Block, plan: { replace?: Record<string, string> }): void {
  for (const command of commands(block.text)) {
    const pasted = substitute(command, plan.replace);
    const result = spawnSync('bash', ['-c', [...session, pasted].join('\n')], {
      cwd: repoRoot,
      env: { ...withoutGatewayEnv(process.env), KEY: key },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, `${block.line} \`${pasted}\`:\n${output}`).toBe(0);
    if (/^export \w+=/.test(pasted)) session.push(pasted);
    for (const [, prefix, id] of output.matchAll(/\b(key|ws|whep|user)_([0-9a-z]{8,})\b/g)) ids.set(prefix, `${prefix}_${id}`);
    // An API answer is JSON without an error (a DELETE may answer nothing); a model's answer carries its cost.
    if (pasted.startsWith('curl') && result.stdout) {
      const answer = JSON.parse(result.stdout) as { error?: unknown; cost?: { amount: number } };
      expect(answer.error ?? null, `${block.line} \`${pasted}\`: ${result.stdout}`).toBeNull();
      if (pasted.includes('/api/v1/')) expect(answer.cost?.amount).toBeGreaterThan(0);
    }
  }
}

/** Type-checks the TypeScript snippets as ES modules under the repository (where `openai` and the others resolve), then runs each. */
function runModules(files: { block: Block; name: string; source: string }[]): string[] {
  const dir = mkdtempSync(join(repoRoot, 'test', '.readme-snippets-'));
  try {
    const paths = files.map(({ name, source }) => {
      const path = join(dir, name);
      writeFileSync(path, source);
      return path;
    });
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node'];
    // TypeScript is type-checked; JavaScript is only run (its parameters carry no types to check).
    const checked = spawnSync(process.execPath, [tsc, ...flags, ...paths.filter((p) => p.endsWith('.mts'))], { cwd: repoRoot, encoding: 'utf8' });
    expect(checked.status, `tsc:\n${checked.stdout}${checked.stderr}`).toBe(0);
    return paths.map((path, i) => {
      const ran = spawnSync(process.execPath, ['--import', 'tsx', path], { cwd: repoRoot, env: { ...process.env, KEY: key }, encoding: 'utf8', timeout: 60_000 });
      expect(ran.status, `${files[i].block.line}:\n${ran.stdout}${ran.stderr}`).toBe(0);
      return ran.stdout;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The README's webhook check, run on a delivery signed by the Standard Webhooks library. */
const verifyCheck = `
import { Webhook } from 'standardwebhooks';
const secret = 'whsec_' + Buffer.from('a secret of thirty-two bytes....').toString('base64');
const body = JSON.stringify({ type: 'video.completed' });
const at = new Date();
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('msg_1', at, body) };
if (!verify(secret, headers, body)) throw new Error('a signed delivery did not verify');
if (verify(secret, headers, body + ' ')) throw new Error('a changed body verified');
console.log('verified');
`;

describe('README examples, pasted as written against npm run demo', () => {
  it('lists every fenced block of the README, each run or left out with a reason', () => {
    const keys = blocks.map(firstLine);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    expect(keys.filter((k) => !plans[k])).toEqual([]);
    expect(Object.keys(plans).filter((k) => !keys.includes(k))).toEqual([]);
  });

  it('runs every shell example against the demo, in the order the README gives them', () => {
    const shell = blocks.filter((b) => (plans[firstLine(b)] as { run?: string })?.run === 'shell');
    expect(shell.length).toBeGreaterThan(5);
    for (const block of shell) runShell(block, plans[firstLine(block)] as { replace?: Record<string, string> });
  }, 600_000);

  it('type-checks and runs the SDK and webhook snippets', () => {
    const snippets = blocks.flatMap((block, i) => {
      const plan = plans[firstLine(block)] as { run?: string };
      if (plan?.run === 'ts') return [{ block, name: `snippet-${i}.mts`, source: block.text.replaceAll('http://127.0.0.1:8080', url) }];
      if (plan?.run === 'webhook-verify') return [{ block, name: `snippet-${i}.mjs`, source: block.text + verifyCheck }];
      return [];
    });
    expect(snippets).toHaveLength(3);
    const outputs = runModules(snippets);
    expect(outputs[0]).toContain('Hello! I am the demo upstream');
    expect(outputs[0]).toMatch(/ USD\n$/);
    expect(outputs[1]).toContain('Hello! I am the demo upstream');
    expect(outputs[2]).toBe('verified\n');
  }, 180_000);
});
