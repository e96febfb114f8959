// The fake upstream's Responses route: a text answer (and, when the request asks for the image_generation tool, a generated
// image), as a response object or as the response.* event sequence.
import type { FakeUpstream } from './fake-upstream.js';
import { json, writeSse } from './fake-upstream.js';
import { png } from './media-samples.js';

export interface ResponsesScript {
  text: string;
  image: Buffer;
  usage: { input_tokens: number; output_tokens: number };
}

export function installResponses(fake: FakeUpstream): ResponsesScript {
  const script: ResponsesScript = { text: 'Hello from Responses.', image: png(512), usage: { input_tokens: 20, output_tokens: 8 } };
  fake.route(async (req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/responses')) return false;
    const body = req.body ?? {};
    const wantsImage = Array.isArray(body.tools) && body.tools.some((t: { type?: string }) => t.type === 'image_generation');
    const message = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: script.text, annotations: [] }] };
    const image = { id: 'ig_1', type: 'image_generation_call', status: 'completed', result: script.image.toString('base64') };
    const output = wantsImage ? [image, message] : [message];
    const usage = { ...script.usage, total_tokens: script.usage.input_tokens + script.usage.output_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    const response = (status: string, out: unknown[], withUsage: boolean) => ({ id: 'resp_1', object: 'response', created_at: 1_700_000_000, model: body.model, status, output: out, ...(withUsage ? { usage } : { usage: null }) });
    if (!body.stream) {
      json(res, 200, response('completed', output, true));
      return true;
    }
    let n = 0;
    const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: n++, ...data } });
    const events = [event('response.created', { response: response('in_progress', [], false) }), event('response.in_progress', { response: response('in_progress', [], false) })];
    output.forEach((item, index) => {
      if (item.type === 'image_generation_call') {
        events.push(event('response.output_item.added', { output_index: index, item: { ...image, status: 'in_progress', result: null } }));
        events.push(event('response.output_item.done', { output_index: index, item: image }));
        return;
      }
      events.push(event('response.output_item.added', { output_index: index, item: { ...message, status: 'in_progress', content: [] } }));
      events.push(event('response.content_part.added', { output_index: index, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
      for (const piece of script.text.match(/.{1,6}/gs) ?? []) events.push(event('response.output_text.delta', { output_index: index, item_id: 'msg_1', content_index: 0, delta: piece }));
      events.push(event('response.output_text.done', { output_index: index, item_id: 'msg_1', content_index: 0, text: script.text }));
      events.push(event('response.content_part.done', { output_index: index, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: script.text, annotations: [] } }));
      events.push(event('response.output_item.done', { output_index: index, item: message }));
    });
    events.push(event('response.completed', { response: response('completed', output, true) }));
    await writeSse(res, events);
    return true;
  });
  return script;
}
