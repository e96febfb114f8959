// A vendor that takes the reference image's bytes inline in JSON (`submit.inline`, Veo's bytesBase64Encoded): a file of
// the workspace reaches the request mapping as {base64, mime_type}, and the shipped Veo protocol sends it as the first frame.
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { png } from './kit/media-samples.js';
import { tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

describe('a reference image sent inline', () => {
  it('reaches Veo as bytesBase64Encoded with its type, read from the workspace file', async () => {
    fake = await FakeUpstream.start();
    const bodies: any[] = [];
    fake.route((req, res) => {
      if (req.method !== 'POST' || !req.path.endsWith(':predictLongRunning')) return false;
      bodies.push(req.body);
      json(res, 200, { name: 'models/veo-3.1-generate-preview/operations/op1' });
      return true;
    });
    const channel = `id: veo\nprotocol: veo\nbaseUrl: ${fake.url}/v1beta\ncredential: { env: V_KEY }\nmodels:\n  - { id: veo-3.1, upstream: veo-3.1-generate-preview, kind: video, media: { maxSeconds: 8 }, price: { perVideoSecond: 0.4 } }\n`;
    gw = await startGateway({ channels: { veo: channel }, env: { V_KEY: 'k' }, extraConfig: tasksConfig(fake) });
    const image = png(300);
    const boundary = 'inlineBOUNDARY';
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ref.png"\r\nContent-Type: image/png\r\n\r\n`),
      image,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const file = (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })).json();
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'veo-3.1', prompt: 'Animate it', seconds: '8', input_reference: file.id } });
    expect(created.statusCode, created.body).toBe(200);
    await waitFor(async () => bodies.length, (n) => n === 1);
    expect(bodies[0]).toEqual({
      instances: [{ prompt: 'Animate it', image: { bytesBase64Encoded: image.toString('base64'), mimeType: 'image/png' } }],
      parameters: { durationSeconds: 8 },
    });
  });

  it('takes 40 videos at once naming one workspace file and prints no MaxListenersExceededWarning (a non-JSON line in the log)', async () => {
    fake = await FakeUpstream.start();
    let submitted = 0;
    fake.route((req, res) => {
      if (req.method !== 'POST' || !req.path.endsWith(':predictLongRunning')) return false;
      json(res, 200, { name: `models/veo-3.1-generate-preview/operations/op${++submitted}` });
      return true;
    });
    const channel = `id: veo\nprotocol: veo\nbaseUrl: ${fake.url}/v1beta\ncredential: { env: V_KEY }\nmodels:\n  - { id: veo-3.1, upstream: veo-3.1-generate-preview, kind: video, media: { maxSeconds: 8 }, price: { perVideoSecond: 0.4 } }\n`;
    gw = await startGateway({ channels: { veo: channel }, env: { V_KEY: 'k' }, extraConfig: tasksConfig(fake) });
    const boundary = 'inlineBOUNDARY';
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ref.png"\r\nContent-Type: image/png\r\n\r\n`),
      png(300),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const file = (await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })).json();
    const warnings: Error[] = [];
    let accepted = 0;
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const created = await Promise.all(Array.from({ length: 40 }, (_, i) => gw!.app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${gw!.key}` }, payload: { model: 'veo-3.1', prompt: `Animate it ${i}`, seconds: '8', input_reference: file.id } })));
      // tasks.maxInFlightPerKey (16) admits the first; the rest are told to wait.
      const statuses = created.map((r) => r.statusCode);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      accepted = statuses.filter((s) => s === 200).length;
      await waitFor(async () => submitted, (n) => n === accepted);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(accepted).toBe(16);
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
