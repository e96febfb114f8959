// SIGTERM's drain (app.close()): no new connections are accepted, and a stream in flight still finishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { pausedChatStream } from './kit/streams.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) }, listen: true });
});
afterAll(async () => {
  await gw.close().catch(() => undefined);
  await fake.close();
});

describe('draining on shutdown', () => {
  it('finishes a stream in flight while refusing new connections', async () => {
    const { started, finish } = pausedChatStream(fake, 'first ', 'last');
    const stream = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }).then((r) => r.text());
    await started;

    const closing = gw.app.close();
    // A new request is turned away: refused once the server stops listening, or 503 while it is closing.
    const probe = await fetch(`${gw.url}/healthz`, { headers: { connection: 'close' } }).then((r) => r.status, () => 'refused');
    expect(['refused', 503]).toContain(probe);
    finish();
    const body = await stream;
    expect(body).toContain('first ');
    expect(body).toContain('last');
    expect(body.trim().endsWith('data: [DONE]')).toBe(true);
    await closing;
  });
});
