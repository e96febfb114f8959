import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { compiled } from './kit/compiled.js';
import { repoRoot } from './kit/paths.js';

const run = promisify(execFile);
const fixtures = 'test/fixtures/config-errors';

async function problemsOf(fixture: string): Promise<string[]> {
  try {
    await loadConfig(join(repoRoot, fixtures, fixture, 'config.yaml'), { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error(`fixture ${fixture} loaded without errors`);
}

describe('check-config reports every error as file:line:col /pointer message', () => {
  const cases: [string, string[]][] = [
    ['yaml-syntax', [`${fixtures}/yaml-syntax/channels/broken.yaml:8:1 / YAML syntax error: Flow map in block collection must be sufficiently indented and end with a }`]],
    ['unknown-field', [`${fixtures}/unknown-field/channels/extra.yaml:4:1 /retry_count unknown field "retry_count"`]],
    ['wrong-type', [`${fixtures}/wrong-type/channels/typed.yaml:7:31 /models/0/price/inputPerMillion must be number`]],
    ['missing-price', [`${fixtures}/missing-price/channels/free.yaml:5:5 /models/0 missing required field "price"`]],
    ['empty-price', [`${fixtures}/empty-price/channels/free.yaml:7:12 /models/0/price model "m1" has no price: set at least one of inputPerMillion, outputPerMillion, cachedInputPerMillion, perRequest, perImage, perVideoSecond, perMinute, perMillionCharacters, perThousandSearches, units, free`]],
    ['unknown-protocol', [`${fixtures}/unknown-protocol/channels/lost.yaml:2:11 /protocol unknown protocol "carrier-pigeon" (known: openai-chat; searched ${fixtures}/unknown-protocol/channels/protocols)`]],
    [
      'duplicate-model',
      [
        `${fixtures}/duplicate-model/channels/a.yaml:5:9 /models/0/id model "m1" is also served by channel "other"; declare "fallback: true" on every entry to make them a fallback group`,
        `${fixtures}/duplicate-model/channels/b.yaml:5:9 /models/0/id model "m1" is also served by channel "good"; declare "fallback: true" on every entry to make them a fallback group`,
      ],
    ],
    ['liquid-syntax', [`${fixtures}/liquid-syntax/channels/protocols/bad-liquid.yaml:5:11 /operations/chat/path Liquid template: output "{{ model | json " not closed`]],
    ['unknown-filter', [`${fixtures}/unknown-filter/channels/protocols/bad-filter.yaml:5:11 /operations/chat/path Liquid template: undefined filter: shout`]],
    [
      'mapping-leaf',
      [
        `${fixtures}/mapping-leaf/channels/protocols/openai-chat.yaml:90:94 /translations/anthropic-messages/request/messages/$concat/1/concat/else/else/$concat/1/in/then/0/content/do/when/image/image_url/url unknown filter "image_uri"`,
        `${fixtures}/mapping-leaf/channels/protocols/openai-chat.yaml:99:14 /translations/anthropic-messages/request/user Liquid tags ({% %}) are not allowed in a mapping: use $if, $for, $case or $let`,
        `${fixtures}/mapping-leaf/channels/protocols/openai-chat.yaml:197:31 /translations/anthropic-messages/stream/encode/delta/0/data/delta/$if expected "|" before filter`,
      ],
    ],
    ['mapping-fixture', [`${fixtures}/mapping-fixture/channels/protocols/tests/judge.yaml:14:7 /cases/1/out/answers "answers are read from the upstream body" renders null at /answers where the fixture expects {"q1":{"type":"noul","noul":0.5}}`]],
    ['impossible-limits', [`${fixtures}/impossible-limits/channels/small.yaml:7:53 /models/0/limits/maxOutputTokens model "m1" declares maxOutputTokens 16000, more than its contextTokens 8000`]],
    ['mixed-currency', [`${fixtures}/mixed-currency/channels/b-eur.yaml:7:24 /models/0/price/currency model "m2" is priced in EUR, but ${fixtures}/mixed-currency/channels/a-usd.yaml model "m1" is priced in USD; spending caps and totals use one currency`]],
    ['capability-kind', [`${fixtures}/capability-kind/channels/vendor.yaml:12:16 /models/1/reasoning model "judge" is of kind evaluation: "reasoning" says what a chat model accepts`]],
    ['unknown-operation', [`${fixtures}/unknown-operation/channels/vendor.yaml:3:20 /operations/1 protocol "openai-chat" has no operation "responses" (it has: chat)`]],
    [
      'key-pools',
      [
        `${fixtures}/key-pools/channels/empty.yaml:4:14 /credentials must NOT have fewer than 1 items`,
        `${fixtures}/key-pools/channels/weights.yaml:5:35 /credentials/0/weight must be > 0`,
        `${fixtures}/key-pools/channels/weights.yaml:6:35 /credentials/1/weight must be > 0`,
        `${fixtures}/key-pools/channels/weights.yaml:7:35 /credentials/2/weight must be number`,
        `${fixtures}/key-pools/channels/both.yaml:5:1 /credentials a channel takes "credential" (one, or alternatives of which the first that is set serves) or "credentials" (a key pool, all serving), not both`,
        `${fixtures}/key-pools/channels/single.yaml:6:3 /credential/weight field "weight" is for an entry of a key pool ("credentials")`,
        `${fixtures}/key-pools/channels/single.yaml:7:3 /credential/baseUrl field "baseUrl" is for an entry of a key pool ("credentials")`,
      ],
    ],
    [
      'credential-kinds',
      [
        `${fixtures}/credential-kinds/channels/cloud.yaml:6:5 /credential/0/scope field "scope" is not used by a credential of kind static`,
        `${fixtures}/credential-kinds/channels/cloud.yaml:12:5 /credential/1/keyFileEnv field "keyFileEnv" is not used by a credential of kind oauth2-client-credentials`,
        `${fixtures}/credential-kinds/channels/cloud.yaml:18:5 /credential/2/header field "header" is not used by a credential of kind aws-sigv4`,
      ],
    ],
    [
      'credential-fields',
      [
        `${fixtures}/credential-fields/channels/cloud.yaml:5:3 /credential missing required field "clientSecretEnv"`,
        `${fixtures}/credential-fields/channels/cloud.yaml:5:3 /credential missing required field "scope"`,
      ],
    ],
    ['protocol-extends', [`${fixtures}/protocol-extends/channels/protocols/variant.yaml:2:10 /extends unknown protocol "openai-chats" (known: openai-chat, variant)`]],
    ['root-unknown-section', [`${fixtures}/root-unknown-section/config.yaml:7:1 /serverr unknown field "serverr" (did you mean "server"?)`]],
    [
      'task-operations',
      [
        `${fixtures}/task-operations/channels/protocols/clips.yaml:8:16 /translations/openai-chat/operation translation "openai-chat" names operation "chat", which protocol "clips" does not declare (it has: create, status)`,
        `${fixtures}/task-operations/channels/protocols/clips.yaml:14:14 /evaluate/operation the evaluate section names operation "judge", which protocol "clips" does not declare (it has: create, status)`,
        `${fixtures}/task-operations/channels/protocols/clips.yaml:22:18 /tasks/video/poll/operation task "video" names operation "clip_status", which protocol "clips" does not declare (it has: create, status)`,
        `${fixtures}/task-operations/channels/protocols/clips.yaml:26:30 /tasks/video/result/download/operation task "video" names operation "content", which protocol "clips" does not declare (it has: create, status)`,
      ],
    ],
    [
      'task-ends',
      [
        `${fixtures}/task-ends/channels/protocols/clips.yaml:13:18 /tasks/video/poll/statusMap task "video" never ends failed: its statusMap must map an upstream status word to each of completed and failed`,
        `${fixtures}/task-ends/channels/protocols/clips.yaml:15:7 /tasks/video/result task "video" declares no result source: set one of download, url or base64`,
      ],
    ],
    [
      'batch-api',
      [
        `${fixtures}/batch-api/channels/protocols/bulk.yaml:10:22 /batches/operations/1 the batches section names operation "embeddings", which protocol "bulk" does not declare (it has: chat, upload, create, status, content)`,
        `${fixtures}/batch-api/channels/protocols/bulk.yaml:17:24 /batches/cancel/operation the batches section names operation "stop", which protocol "bulk" does not declare (it has: chat, upload, create, status, content)`,
        `${fixtures}/batch-api/channels/protocols/bulk.yaml:15:27 /batches/results/0/operation the batches section reads results from operation "content", which must answer bytes: set its response to binary`,
        `${fixtures}/batch-api/channels/protocols/bulk.yaml:12:24 /batches/upload/operation the batches section uploads with operation "upload", which must send a form: set its encoding to multipart`,
        `${fixtures}/batch-api/channels/protocols/bulk.yaml:14:72 /batches/poll/statusMap a vendor batch would never end: the statusMap must map a vendor status word to completed`,
      ],
    ],
    [
      'undialected-operation',
      [
        `${fixtures}/undialected-operation/channels/protocols/clips.yaml:5:3 /operations/list operation "list" speaks no dialect and no task, translation or evaluate section names it, so nothing can call it: set the protocol's dialect (or the operation's)`,
      ],
    ],
    // One path language: usage and outputs paths are Liquid paths like every mapping; the old dot paths say how to write them.
    [
      'dot-path',
      [
        `${fixtures}/dot-path/channels/protocols/pics.yaml:7:13 /operations/images/usage/from "usage" is a dot path; paths are Liquid now: write "{{ answer.usage }}" (one variable, answer, then its members: .name, [0], ['name'])`,
        `${fixtures}/dot-path/channels/protocols/pics.yaml:9:26 /operations/images/usage/events/message/from starts at "answer", which is not in scope here: write "{{ event.usage }}" (one variable, event, then its members: .name, [0], ['name'])`,
        `${fixtures}/dot-path/channels/protocols/pics.yaml:12:23 /operations/images/outputs/answer/list ".first" is a property Liquid gives every list and object; a path reads members only: write [0] for the first item, or ['first'] for a member of that name`,
        `${fixtures}/dot-path/channels/protocols/pics.yaml:12:55 /operations/images/outputs/answer/url "url" is a dot path; paths are Liquid now: write "{{ item.url }}" (one variable, item, then its members: .name, [0], ['name'])`,
      ],
    ],
    // The protocol's own error only: not a second "unknown protocol" at the channel or the fixture file that names it.
    ['protocol-schema-error', [`${fixtures}/protocol-schema-error/channels/protocols/clips.yaml:4:37 /operations/create/encoding must be one of "json", "multipart", "none"`]],
  ];
  for (const [fixture, expected] of cases) {
    it(`reports ${fixture}`, async () => {
      expect(await problemsOf(fixture)).toEqual(expected);
    });
  }

  it('exits 1 and prints each error on its own line', async () => {
    const err = await run(process.execPath, [compiled('cli/check-config'), `${fixtures}/unknown-protocol/config.yaml`], { cwd: repoRoot }).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stdout).toContain('/protocol unknown protocol "carrier-pigeon"');
    expect(err.stdout).toContain('config invalid: 1 error(s)');
  });

  it('exits 0 with a summary for the shipped example config', async () => {
    const { stdout } = await run(process.execPath, [compiled('cli/check-config'), 'config.example.yaml'], { cwd: repoRoot, env: { ...process.env, OPENAI_API_KEY: 'x' } });
    expect(stdout).toContain('config OK');
    expect(stdout).toMatch(/\d+ channel\(s\) \(\d+ enabled\)/);
  });
});

describe('config loading', () => {
  it('reads ${VAR} and ${VAR:-default} from the environment, keeping numbers numeric', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: { PORT: '9123' } });
    expect(config.gateway.server.port).toBe(9123);
    expect(config.gateway.server.host).toBe('127.0.0.1');
  });

  it('disables every channel whose credential variable is unset, naming them all in one warning', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
    const openai = config.channels.find((c) => c.id === 'openai')!;
    expect(openai.disabledReason).toContain('OPENAI_API_KEY');
    const lines = config.warnings.filter((w) => w.includes('channels disabled'));
    expect(lines).toHaveLength(1);
    const disabled = config.channels.filter((c) => c.disabledReason?.includes('environment variable'));
    expect(lines[0]).toMatch(new RegExp(`^${disabled.length} channels disabled \\(missing variables\\): `));
    expect(lines[0]).toContain('openai (OPENAI_API_KEY)');
    expect(config.warnings.filter((w) => w.includes('OPENAI_API_KEY'))).toHaveLength(1);
  });

  it('warns, at the mapping, when no fixture renders it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'unrendered-'));
    try {
      cpSync(join(repoRoot, fixtures, 'mapping-fixture'), dir, { recursive: true });
      rmSync(join(dir, 'channels', 'protocols', 'tests'), { recursive: true });
      const loaded = await loadConfig(join(dir, 'config.yaml'), { env: {} });
      expect(loaded.warnings.map((w) => w.slice(w.indexOf('judge.yaml')))).toEqual([
        'judge.yaml:10:5 /evaluate/request no mapping fixture renders this mapping (channels/protocols/tests/, docs/translation.md)',
        'judge.yaml:13:5 /evaluate/response no mapping fixture renders this mapping (channels/protocols/tests/, docs/translation.md)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('freezes the loaded config', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
    expect(Object.isFrozen(config.gateway.server)).toBe(true);
    expect(Object.isFrozen(config.channels[0].models[0].price)).toBe(true);
  });
});
