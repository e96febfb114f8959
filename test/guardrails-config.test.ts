// check-config on guardrails (guardrails/*.yaml): every refusal at its own file:line:col (an invalid or catastrophic
// regular expression, an unknown detector, a moderation guard naming a model that is not one, a guardrail attached to
// nothing, an unknown id on a route), and a sound set built into chains; with no guardrail files, no setup at all.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { displayPath } from '../src/config/yaml-source.js';
import { ConfigError } from '../src/base/errors.js';
import { reloadChanges } from '../src/compile/reload-changes.js';
import { writeFileSync as rewrite } from 'node:fs';
import { repoRoot } from './kit/gateway.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const models = `  - id: alpha
    kind: chat
    price: { inputPerMillion: 1, outputPerMillion: 2 }
  - id: mod
    kind: moderation
    price: { perRequest: 0 }
`;

/** A config folder with one channel, a route file and a guardrail file; the two files as messages name them. */
function configWith(guardrails: string | undefined, routes = '- id: safe\n  targets: [{ model: alpha }]\n  guardrails: [pii]\n'): { file: string; guardrails: string; routes: string } {
  const dir = mkdtempSync(join(tmpdir(), 'guardrails-config-'));
  dirs.push(dir);
  for (const folder of ['channels', 'routes', 'guardrails']) mkdirSync(join(dir, folder));
  cpSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  writeFileSync(join(dir, 'channels', 'vendor.yaml'), `id: vendor\nprotocol: openai-chat\nbaseUrl: https://vendor.example/v1\nmodels:\n${models}`);
  const guardrailFile = join(dir, 'guardrails', 'main.yaml');
  if (guardrails !== undefined) writeFileSync(guardrailFile, guardrails);
  writeFileSync(join(dir, 'routes', 'main.yaml'), routes);
  writeFileSync(join(dir, 'config.yaml'), 'server:\n  logLevel: silent\nchannels:\n  dir: ./channels\n');
  return { file: join(dir, 'config.yaml'), guardrails: displayPath(guardrailFile), routes: displayPath(join(dir, 'routes', 'main.yaml')) };
}

async function problemsOf(file: string): Promise<string[]> {
  const error = await loadConfig(file, { env: {} }).catch((err: unknown) => err);
  if (error instanceof ConfigError) return error.problems;
  throw new Error(`the config loaded without errors (${String(error)})`);
}

const pii = '- id: pii\n  kind: pattern\n  detectors: [email]\n  action: redact\n';

describe('check-config on guardrails', () => {
  it('builds the chain of a route and of a model; a name with none has no chain', async () => {
    const { file } = configWith(`${pii}- id: cards\n  kind: pattern\n  detectors: [payment-card]\n  action: block\n  models: [alpha]\n`);
    const config = await loadConfig(file, { env: {} });
    expect(config.guardrails!.chainFor('safe')!.ids).toEqual(['pii', 'cards']);
    expect(config.guardrails!.chainFor('alpha')!.ids).toEqual(['cards']);
    expect(config.guardrails!.chainFor('mod')).toBeUndefined();
  });

  it('a reload names the guardrails it adds, changes and removes', async () => {
    const { file } = configWith(`${pii}- id: old\n  kind: pattern\n  detectors: [iban]\n  action: flag\n  offered: true\n`);
    const before = await loadConfig(file, { env: {} });
    rewrite(join(file, '..', 'guardrails', 'main.yaml'), `${pii.replace('redact', 'block')}- id: new\n  kind: pattern\n  detectors: [iban]\n  action: flag\n  offered: true\n`);
    const next = await loadConfig(file, { env: {} });
    expect(reloadChanges(before, next)).toEqual(['guardrail "pii" changed', 'guardrail "new" added', 'guardrail "old" removed']);
  });

  it('declares no setup when there are no guardrail files (a call then checks nothing)', async () => {
    const { file } = configWith(undefined, '- id: safe\n  targets: [{ model: alpha }]\n');
    const config = await loadConfig(file, { env: {} });
    expect(config.guardrails).toBeUndefined();
  });

  it('refuses an invalid regular expression, one RE2 cannot run, and an unknown detector, each at its place', async () => {
    const { file, guardrails } = configWith(`${pii}- id: mine\n  kind: pattern\n  offered: true\n  action: flag\n  detectors: [email, ssn]\n  patterns:\n    - 'ok-[0-9]+'\n    - '(unclosed'\n    - { name: look, regex: '(?<=a)b' }\n`);
    expect(await problemsOf(file)).toEqual([
      `${guardrails}:9:22 /1/detectors/1 unknown detector "ssn" (known: email, iban, payment-card, phone, private-key, secret)`,
      expect.stringMatching(new RegExp(`^${guardrails.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:12:7 /1/patterns/1 not a valid RE2 regular expression: .*missing closing \\)`)),
      expect.stringMatching(/:13:28 \/1\/patterns\/2\/regex not a valid RE2 regular expression/),
    ]);
  });

  it('refuses a moderation guard naming a model that is not a moderation model', async () => {
    const { file, guardrails } = configWith(`${pii}- id: mod-check\n  kind: moderation\n  action: block\n  offered: true\n  moderation: { model: alpha }\n`);
    expect(await problemsOf(file)).toEqual([`${guardrails}:9:24 /1/moderation/model model "alpha" is a chat model, not a moderation model`]);
  });

  it('refuses a guardrail attached to nothing, and an id a route names that no file declares', async () => {
    const { file, guardrails, routes } = configWith(`${pii}- id: lonely\n  kind: pattern\n  detectors: [iban]\n  action: flag\n`, '- id: safe\n  targets: [{ model: alpha }]\n  guardrails: [pii, nope]\n');
    expect(await problemsOf(file)).toEqual([
      `${routes}:3:21 /0/guardrails/1 no guardrail "nope" (guardrails/ files)`,
      `${guardrails}:5:7 /1/id guardrail "lonely" is attached to nothing: name it in a route's guardrails, give it models, or offer it to workspaces (offered: true)`,
    ]);
  });

  it('refuses an unknown model, a redaction by a kind that finds no spans, and an id declared twice', async () => {
    const { file, guardrails } = configWith(`${pii}- id: pii\n  kind: pattern\n  detectors: [email]\n  action: flag\n  models: [ghost]\n`);
    const problems = await problemsOf(file);
    expect(problems).toContain(`${guardrails}:5:7 /1/id guardrail "pii" is declared twice`);
    const second = configWith(`${pii}- id: loose\n  kind: pattern\n  detectors: [email]\n  action: flag\n  models: [ghost]\n- id: mod-redact\n  kind: moderation\n  action: redact\n  offered: true\n  moderation: { model: mod }\n`);
    const more = await problemsOf(second.file);
    expect(more).toContain(`${second.guardrails}:9:12 /1/models/0 no channel serves model "ghost"`);
    expect(more).toContain(`${second.guardrails}:12:11 /2/action a moderation guardrail's action is block or flag: it finds no spans to redact`);
  });

  it('refuses a kind at a stage it cannot run at, and a member of another kind', async () => {
    const { file, guardrails } = configWith(`${pii}- id: late\n  kind: moderation\n  stage: [input, stream]\n  action: block\n  offered: true\n  moderation: { model: mod }\n  detectors: [email]\n`);
    expect(await problemsOf(file)).toEqual([
      `${guardrails}:7:10 /1/stage a moderation guardrail runs at input, output, not stream`,
      `${guardrails}:11:14 /1/detectors only a pattern guardrail has detectors`,
    ]);
  });

  it('refuses an http guard whose signing variable is not set', async () => {
    const { file, guardrails } = configWith(`${pii}- id: svc\n  kind: http\n  action: redact\n  offered: true\n  http: { url: 'http://127.0.0.1:9/check', secretEnv: GUARD_KEY }\n`);
    expect(await problemsOf(file)).toEqual([`${guardrails}:9:55 /1/http/secretEnv variable GUARD_KEY is not set: the guard's requests would go unsigned`]);
    const config = await loadConfig(file, { env: { GUARD_KEY: 'k' } });
    expect(config.guardrails!.offered.has('svc')).toBe(true);
  });

  it('refuses a schema guardrail whose JSON Schema is invalid, at the place in the schema, and one at the input stage', async () => {
    const schema = '  schema:\n    type: object\n    properties:\n      name: { type: strin }\n      age: { typ: integer }\n';
    const { file, guardrails } = configWith(`${pii}- id: shape\n  kind: schema\n  action: block\n  offered: true\n${schema}- id: early\n  kind: schema\n  stage: input\n  action: block\n  offered: true\n  schema: { type: object }\n`);
    const problems = await problemsOf(file);
    expect(problems).toContain(`${guardrails}:12:21 /1/schema/properties/name/type not a valid JSON Schema: must be equal to one of the allowed values`);
    expect(problems).toContain(`${guardrails}:16:10 /2/stage a schema guardrail runs at output, not input`);
    const typo = configWith(`${pii}- id: shape\n  kind: schema\n  action: block\n  offered: true\n  schema: { type: object, properties: { age: { typ: integer } } }\n`);
    expect(await problemsOf(typo.file)).toEqual([expect.stringMatching(new RegExp(`^${typo.guardrails.replace(/[.*+?^\${}()|[\]\\]/g, '\\$&')}:9:11 /1/schema not a usable JSON Schema: strict mode: unknown keyword: "typ"`))]);
  });

  it('refuses a limits guardrail that sets no limit, and one at the output stage', async () => {
    const { file, guardrails } = configWith(`${pii}- id: none\n  kind: limits\n  action: block\n  offered: true\n  limits: { forbiddenTools: [] }\n- id: late\n  kind: limits\n  stage: output\n  action: block\n  offered: true\n  limits: { maxImages: 1 }\n`);
    expect(await problemsOf(file)).toEqual([`${guardrails}:9:11 /1/limits a limits guardrail sets at least one limit`, `${guardrails}:12:10 /2/stage a limits guardrail runs at input, not output`]);
  });

  it('refuses restore on a guardrail that does not redact the input', async () => {
    const { file, guardrails } = configWith(`${pii}- id: back\n  kind: pattern\n  detectors: [email]\n  action: block\n  restore: true\n  offered: true\n`);
    expect(await problemsOf(file)).toEqual([`${guardrails}:9:12 /1/restore restore puts back what a pattern guardrail redacted from the input: it needs kind pattern, action redact and the input stage`]);
  });

  it('builds a moderation guardrail naming a route whose targets are moderation models', async () => {
    const routes = '- id: safe\n  targets: [{ model: alpha }]\n  guardrails: [pii, civil]\n- id: mods\n  targets: [{ model: mod }]\n';
    const { file } = configWith(`${pii}- id: civil\n  kind: moderation\n  action: block\n  moderation: { model: mods, thresholds: { hate: 0.5 } }\n`, routes);
    const config = await loadConfig(file, { env: {} });
    expect(config.guardrails!.chainFor('safe')!.ids).toEqual(['pii', 'civil']);
  });
});
