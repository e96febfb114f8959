// The fake upstream's Responses route: a text answer (and, when the request asks for the image_generation tool, a generated
// image; when it offers a function tool and no function_call_output is in the input yet, a function_call of the first
// function tool instead of the text; for a json_schema text.format, the JSON instead of the text), as a response object
// or as the response.* event sequence.
import type { FakeUpstream } from './fake-upstream.js';
import { json, writeSse } from './fake-upstream.js';
import { png } from './media-samples.js';

export interface ResponsesScript {
  text: string;
  image: Buffer;
  usage: { input_tokens: number; output_tokens: number };
  /** The arguments (a JSON text) of the function_call answered while a function tool has not answered yet. */
  callArguments: string;
  /** The answer's text when the request asks for a json_schema text.format. */
  json: string;
}

interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: string;
  call_id: string;
  name: string;
  arguments: string;
}

/** The function_call to answer: the first function tool's, unless a function_call_output is already in the input. */
function functionCall(body: Record<string, any>, script: ResponsesScript): FunctionCallItem | undefined {
  const tool = Array.isArray(body.tools) ? body.tools.find((t: { type?: string }) => t.type === 'function') : undefined;
  const answered = Array.isArray(body.input) && body.input.some((i: { type?: string }) => i?.type === 'function_call_output');
  if (!tool || answered) return undefined;
  return { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_resp_1', name: tool.name, arguments: script.callArguments };
}

/** A function_call item's streamed events: added, the arguments in deltas, the arguments done, the item done. */
function functionCallEvents(item: FunctionCallItem, index: number, event: (type: string, data: Record<string, unknown>) => unknown): unknown[] {
  const events = [event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } })];
  for (const piece of item.arguments.match(/.{1,6}/gs) ?? []) events.push(event('response.function_call_arguments.delta', { output_index: index, item_id: item.id, delta: piece }));
  events.push(event('response.function_call_arguments.done', { output_index: index, item_id: item.id, name: item.name, arguments: item.arguments }));
  events.push(event('response.output_item.done', { output_index: index, item }));
  return events;
}

export function installResponses(fake: FakeUpstream): ResponsesScript {
  const script: ResponsesScript = { text: 'Hello from Responses.', image: png(512), usage: { input_tokens: 20, output_tokens: 8 }, callArguments: '{}', json: '{}' };
  fake.route(async (req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/responses')) return false;
    const body = req.body ?? {};
    const wantsImage = Array.isArray(body.tools) && body.tools.some((t: { type?: string }) => t.type === 'image_generation');
    const text = body.text?.format?.type === 'json_schema' ? script.json : script.text;
    const message = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
    const image = { id: 'ig_1', type: 'image_generation_call', status: 'completed', result: script.image.toString('base64') };
    const call = functionCall(body, script);
    const output: { type: string }[] = call ? [call] : wantsImage ? [image, message] : [message];
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
      if (item === call) {
        events.push(...(functionCallEvents(call, index, event) as typeof events));
        return;
      }
      if (item.type === 'image_generation_call') {
        events.push(event('response.output_item.added', { output_index: index, item: { ...image, status: 'in_progress', result: null } }));
        events.push(event('response.output_item.done', { output_index: index, item: image }));
        return;
      }
      events.push(event('response.output_item.added', { output_index: index, item: { ...message, status: 'in_progress', content: [] } }));
      events.push(event('response.content_part.added', { output_index: index, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
      for (const piece of text.match(/.{1,6}/gs) ?? []) events.push(event('response.output_text.delta', { output_index: index, item_id: 'msg_1', content_index: 0, delta: piece }));
      events.push(event('response.output_text.done', { output_index: index, item_id: 'msg_1', content_index: 0, text }));
      events.push(event('response.content_part.done', { output_index: index, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text, annotations: [] } }));
      events.push(event('response.output_item.done', { output_index: index, item: message }));
    });
    events.push(event('response.completed', { response: response('completed', output, true) }));
    await writeSse(res, events);
    return true;
  });
  return script;
}
