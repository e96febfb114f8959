// Packages only some configurations use are loaded when first needed (src/base/load-on-use.ts, issue 52's idle RSS):
// a gateway with one plain chat channel that has served a call holds none of smithy (AWS signing and event streams),
// re2js (operator patterns) or openid-client (single sign-on); a config with an aws-sigv4 channel and a pattern with a
// regex loads the first two (the pattern's as the config loads, the signer with the channel's first call). Checked in a child process that lists what it loaded, ES modules (by the
// resolve hook of test/kit/loaded-modules.ts) and CommonJS ones (require.cache) alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { runWatchingModules } from './kit/process.js';

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await FakeUpstream.start();
});
afterAll(async () => fake.close());

const PACKAGES = ['@smithy/', 're2js', 'openid-client'];

type Loaded = Record<string, boolean>;

/** Which of PACKAGES the child had loaded after a plain gateway's chat call, and after a config that needs two loaded and called. */
async function packagesLoaded(): Promise<{ plain: Loaded; configured: Loaded; chatStatus: number }> {
  const script = `
    const { createRequire } = await import('node:module');
    const { startGateway, chatChannel } = await import('./test/kit/gateway.ts');
    const packages = ${JSON.stringify(PACKAGES)};
    const loaded = async () => {
      const urls = [...(await globalThis.loadedModules()), ...Object.keys(createRequire(process.cwd() + '/').cache)];
      return Object.fromEntries(packages.map((p) => [p, urls.some((u) => u.includes('/node_modules/' + p))]));
    };
    const plain = await startGateway({ channels: { fake: chatChannel('fake', process.argv[1] + '/v1') } });
    const chat = await plain.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: 'Bearer ' + plain.key }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    const afterPlain = await loaded();
    await plain.close();
    const aws = 'id: aws\\nprotocol: bedrock-converse\\nbaseUrl: ' + process.argv[1] + '\\ncredential:\\n  kind: aws-sigv4\\n  service: bedrock\\n  regionEnv: LAZY_AWS_REGION\\n  accessKeyIdEnv: LAZY_AWS_KEY_ID\\n  secretAccessKeyEnv: LAZY_AWS_SECRET\\nmodels:\\n  - id: aws-chat\\n    kind: chat\\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\\n';
    const guardrail = '- id: words\\n  kind: pattern\\n  patterns: [{ name: word, regex: "SECRET-[0-9]+" }]\\n  action: block\\n  offered: true\\n';
    const configured = await startGateway({ channels: { aws }, files: { 'guardrails/main.yaml': guardrail }, env: { LAZY_AWS_REGION: 'eu-west-3', LAZY_AWS_KEY_ID: 'AKIDEXAMPLE', LAZY_AWS_SECRET: 'secret' } });
    // Signed when first called (whatever the fake answers): the channel's client is made with its first request.
    await configured.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: 'Bearer ' + configured.key }, payload: { model: 'aws-chat', messages: [{ role: 'user', content: 'hi' }] } });
    const afterConfigured = await loaded();
    await configured.close();
    console.log(JSON.stringify({ plain: afterPlain, configured: afterConfigured, chatStatus: chat.statusCode }));
  `;
  return runWatchingModules<{ plain: Loaded; configured: Loaded; chatStatus: number }>(script, fake.url);
}

describe('packages a configuration may not use', () => {
  it('are not loaded by a plain chat gateway, and are by a config that uses them', { timeout: 60_000 }, async () => {
    const { plain, configured, chatStatus } = await packagesLoaded();
    expect(chatStatus).toBe(200);
    expect(plain).toEqual({ '@smithy/': false, re2js: false, 'openid-client': false });
    expect(configured).toMatchObject({ '@smithy/': true, re2js: true });
  });
});
