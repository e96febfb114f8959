// An upstream's error event mid-stream reaches a pass-through client scrubbed, as an error answer would: no credential, URL or upstream model id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
const leak = 'upstream-chat at https://10.0.0.7/v1 rejected key sk-live-4f9a8b7c6d5e4f3a2b1c0d9e: overloaded';

beforeAll(async () => {
  fake = await FakeUpstream.start();
  const claude = `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${fake.url}/anthropic\nmodels:\n${testModels.fakeChat.replace('fake-chat', 'fake-claude')}`;
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`), claude } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const expectScrubbed = (body: string) => {
  expect(body).toContain('overloaded');
  for (const secret of ['sk-live-4f9a8b7c6d5e4f3a2b1c0d9e', '10.0.0.7', 'upstream-chat']) expect(body).not.toContain(secret);
};

describe('error events inside a passed-through stream', () => {
  it('are scrubbed on /v1/chat/completions', async () => {
    fake.next({ kind: 'sse', events: [{ data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] } }, { data: { error: { message: leak, type: 'server_error', code: 'x' } } }] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expectScrubbed(res.body);
  });

  it('are scrubbed on /v1/messages', async () => {
    fake.next({ kind: 'sse', events: [{ event: 'message_start', data: { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'upstream-chat', content: [], usage: { input_tokens: 1, output_tokens: 1 } } } }, { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: leak } } }] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key }, payload: { model: 'fake-claude', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expectScrubbed(res.body);
    expect(res.body).toContain('overloaded_error');
  });
});
