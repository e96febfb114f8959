import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import type { EvaluateSettings } from '../src/evaluate/types.js';
import { repoRoot } from './kit/paths.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Loads a config whose only protocol is `protocolYaml`, returning the problems it reports. */
async function problemsOf(protocolYaml: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'evaluate-config-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'channels', 'protocols'), { recursive: true });
  writeFileSync(join(dir, 'channels', 'protocols', 'judge.yaml'), protocolYaml);
  writeFileSync(join(dir, 'config.yaml'), 'channels:\n  dir: ./channels\n');
  try {
    await loadConfig(join(dir, 'config.yaml'), { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const header = 'id: judge\ndialect: openai-chat\noperations:\n  chat:\n    path: /chat/completions\n';

describe('evaluate config', () => {
  it('renders the shipped logprobs prompts: state first, then labelled options', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
    const settings = config.protocols.get('openai-chat')!.evaluate as unknown as EvaluateSettings;
    expect(settings).toMatchObject({ mode: 'logprobs', labelMassThreshold: 0.5, concurrency: 8, labels: { yes: 'Yes', no: 'No' } });
    const state = config.templates.get(settings.prompts!.state.content).render({ state: 'The sky is green.' });
    expect(state).toContain('<state>\nThe sky is green.\n</state>');
    const choice = config.templates.get(settings.prompts!.choice).render({
      question: { instructions: 'What colour is the sky?', options: [{ label: 'A', key: 'blue', description: 'Blue' }, { label: 'B', key: 'green', description: 'Green' }] },
    });
    expect(choice).toBe('What colour is the sky?\n\nOptions:\nA: Blue\nB: Green\n\nAnswer with the label of one option (A, B).');
  });

  it('rejects a logprobs section without prompts', async () => {
    const problems = await problemsOf(`${header}evaluate:\n  mode: logprobs\n  operation: chat\n`);
    expect(problems.join('\n')).toMatch(/judge\.yaml:\d+:\d+ \/evaluate missing required field "prompts"/);
  });

  it('rejects a prompt with an unknown Liquid filter at its position', async () => {
    const problems = await problemsOf(
      `${header}evaluate:\n  mode: logprobs\n  operation: chat\n  prompts:\n    state: { content: "{{ state }}" }\n    boolean: "{{ question.instructions | shout }}"\n    choice: x\n    score: x\n`,
    );
    expect(problems.join('\n')).toMatch(/judge\.yaml:11:14 \/evaluate\/prompts\/boolean Liquid template: .*shout/);
  });

  it('rejects a native section without its request and response mappings', async () => {
    const problems = await problemsOf(`${header}evaluate:\n  mode: native\n  operation: chat\n`);
    expect(problems.join('\n')).toContain('missing required field "request"');
  });
});
