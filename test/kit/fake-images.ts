// The fake upstream's image routes: generations answered as URLs (served by the fake itself) or base64, as the request asks.
import type { FakeUpstream } from './fake-upstream.js';
import { json } from './fake-upstream.js';
import { png } from './media-samples.js';

export interface ImageScript {
  /** Bytes of each generated image. */
  image: Buffer;
  /** Usage the upstream reports (gpt-image-1 reports tokens). */
  usage?: Record<string, number>;
}

/** Adds POST .../images/generations, POST .../images/edits (multipart) and GET /generated/<n>.png to a fake. */
export function installImages(fake: FakeUpstream): ImageScript {
  const script: ImageScript = { image: png(2048), usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 } };
  fake.route((req, res) => {
    if (req.method === 'GET' && req.path.startsWith('/generated/')) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': script.image.length }).end(script.image);
      return true;
    }
    const edit = req.method === 'POST' && req.path.endsWith('/images/edits');
    if (!edit && (req.method !== 'POST' || !req.path.endsWith('/images/generations'))) return false;
    // An edit's fields arrive as multipart: read the few the answer depends on from the raw form.
    const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(req.raw.toString('latin1'))?.[1];
    const body = edit ? { n: Number(field('n') ?? 1), response_format: field('response_format'), prompt: field('prompt'), size: field('size'), quality: field('quality') } : req.body;
    const n = body?.n ?? 1;
    const asBase64 = body?.response_format === 'b64_json';
    const data = Array.from({ length: n }, (_, i) => (asBase64 ? { b64_json: script.image.toString('base64') } : { url: `${fake.url}/generated/${i}.png`, revised_prompt: body?.prompt }));
    json(res, 200, { created: 1_700_000_000, data, size: body?.size ?? '1024x1024', quality: body?.quality ?? 'high', ...(script.usage ? { usage: script.usage } : {}) });
    return true;
  });
  return script;
}
