// Checks where files meet (issue 46): each operator's mistake that used to pass check-config, or crash it, is reported
// at its own file:line:col. In-process loads of the fixtures under test/fixtures/config-errors/.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { readYamlSource } from '../src/config/yaml-source.js';
import { repoRoot } from './kit/paths.js';

const fixtures = 'test/fixtures/config-errors';

async function problemsOf(fixture: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  try {
    await loadConfig(join(repoRoot, fixtures, fixture, 'config.yaml'), { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error(`fixture ${fixture} loaded without errors`);
}

describe('check-config where files meet', () => {
  it('refuses a relayed entry whose operation no protocol serving its kind declares', async () => {
    expect(await problemsOf('pipeline-operation')).toEqual([
      `${fixtures}/pipeline-operation/catalogue/ocr.yaml:9:42 /0/pipeline/operation endpoint "ocr" sends operation "orc", which no protocol serving kind "ocr" declares (protocol "pages" declares: ocr)`,
    ]);
  });

  it('refuses a translated entry whose operation no protocol of its dialect declares (the pass-through would fail as the client\'s fault)', async () => {
    expect(await problemsOf('translated-operation')).toEqual([
      `${fixtures}/translated-operation/catalogue/chat.yaml:9:60 /0/pipeline/operation endpoint "talk" sends operation "chatt", which no protocol of its dialect "openai-chat" declares (they declare: chat); did you mean "chat"?`,
    ]);
  });

  it('locates a JSON syntax error in a request schema, with no stack trace', async () => {
    expect(await problemsOf('schema-syntax')).toEqual([`${fixtures}/schema-syntax/schemas/ocr.json:4:50 / JSON syntax error: property name expected`]);
  });

  it('suggests the nearest known field for an unknown one', async () => {
    const problems = await problemsOf('did-you-mean');
    expect(problems).toContain(`${fixtures}/did-you-mean/channels/vendor.yaml:3:1 /baseURL unknown field "baseURL" (did you mean "baseUrl"?)`);
    expect(problems).toContain(`${fixtures}/did-you-mean/channels/vendor.yaml:7:5 /models/0/prise unknown field "prise" (did you mean "price"?)`);
  });

  it('names an unset ${VAR} with no default where the emptied field fails its schema', async () => {
    expect(await problemsOf('unset-variable')).toEqual([
      `${fixtures}/unset-variable/channels/local.yaml:3:10 /baseUrl environment variable LOCALVLLM_URL is not set, and "\${LOCALVLLM_URL}" has no default (set it, or write "\${LOCALVLLM_URL:-default}")`,
      `${fixtures}/unset-variable/channels/local.yaml:6:15 /models/0/upstream environment variable LOCAL_MODEL is not set, and "\${LOCAL_MODEL}" has no default (set it, or write "\${LOCAL_MODEL:-default}")`,
    ]);
  });

  it('warns where the field may be empty, and starts a channel disabled while a variable it requires is unset', async () => {
    const config = await loadConfig(join(repoRoot, fixtures, 'unset-variable', 'config.yaml'), { env: { LOCALVLLM_URL: 'http://127.0.0.1:9/v1', LOCAL_MODEL: 'qwen' } });
    expect(config.warnings).toContain(`${fixtures}/unset-variable/config.yaml:3:14 /server/publicUrl environment variable PUBLIC_URL is not set, and "\${PUBLIC_URL}" has no default: the field is empty`);
    expect(config.channels.find((c) => c.id === 'later')?.disabledReason).toBe('channel "later" is disabled: environment variable LATER_URL is not set');
    expect(config.channels.find((c) => c.id === 'local')?.models[0].upstream).toBe('qwen');
  });
});

describe('a YAML text read again (every load reads the shipped files again)', () => {
  const text = 'id: again\nmodels:\n  - id: m1\n    price: { inputPerMillion: 1 }\n';

  it('gives each read its own copy of the value, equal to the first', () => {
    const first = readYamlSource('/config/a.yaml', text);
    const second = readYamlSource('/config/b.yaml', text);
    expect(second.value).toEqual(first.value);
    expect(second.value).not.toBe(first.value);
    (first.value as { models: { id: string }[] }).models[0].id = 'changed';
    expect((readYamlSource('/config/c.yaml', text).value as { models: { id: string }[] }).models[0].id).toBe('m1');
  });

  it('still locates a pointer at its own file:line:col on a read answered from the memo', () => {
    readYamlSource('/config/a.yaml', text);
    const again = readYamlSource('/config/d.yaml', text);
    expect(again.locate('/models/0/price')).toBe('/config/d.yaml:4:12');
    expect(again.locate('/models/0', 'price')).toBe('/config/d.yaml:4:5');
  });

  it('reports a syntax error on every read, not only the first', () => {
    const broken = 'id: broken\nmodels: [\n';
    expect(readYamlSource('/config/e.yaml', broken).syntaxErrors).toHaveLength(1);
    expect(readYamlSource('/config/e.yaml', broken).syntaxErrors).toHaveLength(1);
    expect(readYamlSource('/config/e.yaml', broken).value).toBeUndefined();
  });
});
