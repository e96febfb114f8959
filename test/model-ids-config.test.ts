// check-config on model ids and lifecycles: aliases distinct and unambiguous, replacements that exist, days in order, and
// a warning at file:line:col for a model past its deprecation or retirement day.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { displayPath } from '../src/config/yaml-source.js';
import { ConfigError } from '../src/base/errors.js';
import { repoRoot } from './kit/gateway.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A config folder with one channel file of `models` (YAML list items); its config file's path. */
function configWith(models: string, extra = ''): { file: string; channel: string } {
  const dir = mkdtempSync(join(tmpdir(), 'model-ids-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'channels'));
  cpSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  const channel = join(dir, 'channels', 'vendor.yaml');
  writeFileSync(channel, `id: vendor\nprotocol: openai-chat\nbaseUrl: https://vendor.example/v1\nmodels:\n${models}`);
  writeFileSync(join(dir, 'config.yaml'), `server:\n  logLevel: silent\nchannels:\n  dir: ./channels\n${extra}`);
  return { file: join(dir, 'config.yaml'), channel: displayPath(channel) };
}

const model = (id: string, more = '') => `  - id: ${id}\n    kind: chat\n    price: { inputPerMillion: 1 }\n${more}`;
const at = Date.parse('2026-11-26T12:00:00Z');

async function problemsOf(file: string): Promise<string[]> {
  const error = await loadConfig(file, { env: {}, now: at }).catch((err: unknown) => err);
  if (error instanceof ConfigError) return error.problems;
  throw new Error('the config loaded without errors');
}

describe('check-config on model ids', () => {
  it('warns at file:line:col about a retired model and a deprecated one, saying what requests get', async () => {
    const { file, channel } = configWith(
      model('old', '    deprecatedAt: 2026-01-10\n    retiresAt: 2026-11-20\n    replacement: new\n') + model('aging', '    deprecatedAt: 2026-11-01\n    retiresAt: 2027-03-01\n') + model('new'),
    );
    const { warnings } = await loadConfig(file, { env: {}, now: at });
    expect(warnings).toEqual([
      `${channel}:9:16 /models/0/retiresAt model "old" was retired on 2026-11-20: requests for it are refused, naming "new"`,
      `${channel}:14:19 /models/1/deprecatedAt model "aging" is deprecated since 2026-11-01 and retires on 2027-03-01`,
    ]);
    const replacing = configWith(model('old', '    retiresAt: 2026-11-20\n    replacement: new\n') + model('new'), '  retiredModels: replace\n');
    expect((await loadConfig(replacing.file, { env: {}, now: at })).warnings).toEqual([`${replacing.channel}:8:16 /models/0/retiresAt model "old" was retired on 2026-11-20: requests for it are served by "new"`]);
  });

  it('says nothing of models whose days are still ahead', async () => {
    const { file } = configWith(model('m', '    deprecatedAt: 2026-12-01\n    retiresAt: 2027-06-01\n'));
    expect((await loadConfig(file, { env: {}, now: at })).warnings).toEqual([]);
  });

  it('refuses an alias that is a model id, one naming two models, and a malformed day', async () => {
    const { file, channel } = configWith(model('a', '    aliases: [b, shared]\n') + model('b', '    aliases: [shared]\n') + model('c', '    deprecatedAt: 30/11/2026\n'));
    expect(await problemsOf(file)).toEqual([
      `${channel}:16:19 /models/2/deprecatedAt must match format "date"`,
    ]);
    const second = configWith(model('a', '    aliases: [b, shared]\n') + model('b', '    aliases: [shared]\n'));
    expect(await problemsOf(second.file)).toEqual([
      `${second.channel}:8:15 /models/0/aliases/0 alias "b" of model "a" is the id of a model of channel "vendor"`,
      `${second.channel}:12:15 /models/1/aliases/0 alias "shared" of model "b" already names model "a"`,
    ]);
  });

  it('refuses a replacement no channel serves, of another kind, or in a circle, and a retirement before the deprecation', async () => {
    const { file, channel } = configWith(
      model('a', '    replacement: nowhere\n') +
        model('b', '    replacement: judge\n') +
        model('c', '    retiresAt: 2027-01-01\n    replacement: d\n') +
        model('d', '    retiresAt: 2027-01-01\n    replacement: c\n') +
        model('e', '    deprecatedAt: 2027-02-01\n    retiresAt: 2027-01-01\n') +
        '  - id: judge\n    kind: evaluation\n    price: { inputPerMillion: 1 }\n',
    );
    expect(await problemsOf(file)).toEqual([
      `${channel}:8:18 /models/0/replacement model "a" names replacement "nowhere", which no channel serves`,
      `${channel}:12:18 /models/1/replacement model "b" is of kind chat, its replacement "judge" of kind evaluation`,
      `${channel}:17:18 /models/2/replacement model "c": replacements run in a circle through "c"`,
      `${channel}:22:18 /models/3/replacement model "d": replacements run in a circle through "d"`,
      `${channel}:27:16 /models/4/retiresAt model "e" retires on 2027-01-01, before its deprecation on 2027-02-01`,
    ]);
  });

  it('refuses two models of one kind marked defaultForKind, naming both', async () => {
    const { file, channel } = configWith(model('a', '    defaultForKind: true\n') + model('b', '    defaultForKind: true\n') + '  - id: judge\n    kind: evaluation\n    defaultForKind: true\n    price: { inputPerMillion: 1 }\n');
    expect(await problemsOf(file)).toEqual([`${channel}:12:21 /models/1/defaultForKind model "b" and model "a" are both the default of kind chat; mark one`]);
  });
});
