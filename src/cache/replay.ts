// A cached answer replayed as an event stream in the client's dialect: the events a live stream of that answer has
// (OpenAI chat chunks, Anthropic Messages events, Responses events), the usage in the final event, the cost the hit was
// charged wherever a live stream carries the cost.
type Json = Record<string, any>;
type Cost = { amount: number; currency: string };

/** One server-sent event as text. */
const sse = (data: unknown, event?: string) => `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** Sets the answer's own `cost` (top-level, or a Responses event's response) to what the hit was charged; nothing when it has none. */
export function withHitCost(document: Json, cost: Cost): Json {
  if (document && typeof document === 'object') {
    if ('cost' in document) document.cost = cost;
    if (document.response && typeof document.response === 'object' && 'cost' in document.response) document.response.cost = cost;
  }
  return document;
}

/** An OpenAI chat completion as its chunks: role and content, tool calls, the finish, the usage chunk when asked for, [DONE]. */
function chatEvents(answer: Json, request: Json, cost: Cost | undefined): string[] {
  const { choices = [], usage, cost: _cost, object: _object, ...rest } = answer;
  const base = { ...rest, object: 'chat.completion.chunk' };
  const out: string[] = [];
  for (const choice of choices as Json[]) {
    const message: Json = choice.message ?? {};
    const { tool_calls: calls, ...fields } = message;
    out.push(sse({ ...base, choices: [{ index: choice.index ?? 0, delta: fields, logprobs: choice.logprobs ?? null, finish_reason: null }] }));
    if (Array.isArray(calls) && calls.length) {
      const deltas = calls.map((call: Json, index: number) => ({ index, ...call }));
      out.push(sse({ ...base, choices: [{ index: choice.index ?? 0, delta: { tool_calls: deltas }, logprobs: null, finish_reason: null }] }));
    }
    out.push(sse({ ...base, choices: [{ index: choice.index ?? 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? 'stop' }] }));
  }
  if (request.stream_options?.include_usage === true && usage) out.push(sse({ ...base, choices: [], usage, ...(cost && 'cost' in answer ? { cost } : {}) }));
  out.push(sse('[DONE]'));
  return out;
}

/** One Messages content block as its start, deltas and stop. */
function blockEvents(block: Json, index: number): string[] {
  const out: string[] = [];
  const event = (type: string, data: Json) => out.push(sse({ type, index, ...data }, type));
  if (block.type === 'text') {
    event('content_block_start', { content_block: { ...block, text: '' } });
    event('content_block_delta', { delta: { type: 'text_delta', text: block.text ?? '' } });
  } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
    event('content_block_start', { content_block: { ...block, input: {} } });
    event('content_block_delta', { delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
  } else if (block.type === 'thinking') {
    event('content_block_start', { content_block: { ...block, thinking: '', signature: '' } });
    event('content_block_delta', { delta: { type: 'thinking_delta', thinking: block.thinking ?? '' } });
    if (block.signature) event('content_block_delta', { delta: { type: 'signature_delta', signature: block.signature } });
  } else event('content_block_start', { content_block: block });
  event('content_block_stop', {});
  return out;
}

/** An Anthropic message as its events: message_start, each block, message_delta with the usage, message_stop. */
function messagesEvents(answer: Json, cost: Cost | undefined): string[] {
  const { content = [], stop_reason: stopReason, stop_sequence: stopSequence, usage = {}, cost: _cost, ...rest } = answer;
  const start = { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } };
  const out = [sse({ type: 'message_start', message: start }, 'message_start')];
  (content as Json[]).forEach((block, index) => out.push(...blockEvents(block, index)));
  const delta = { type: 'message_delta', delta: { stop_reason: stopReason ?? null, stop_sequence: stopSequence ?? null }, usage, ...(cost && 'cost' in answer ? { cost } : {}) };
  out.push(sse(delta, 'message_delta'), sse({ type: 'message_stop' }, 'message_stop'));
  return out;
}

/** One Responses output item as its events: added, its content or arguments in deltas, done. */
function itemEvents(item: Json, outputIndex: number, event: (type: string, data: Json) => void): void {
  if (item.type === 'message') {
    event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
    (item.content as Json[] | undefined)?.forEach((part, contentIndex) => {
      const at = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
      const text = part.type === 'output_text' ? part.text : part.type === 'refusal' ? part.refusal : undefined;
      event('response.content_part.added', { ...at, part: text === undefined ? part : { ...part, [part.type === 'refusal' ? 'refusal' : 'text']: '' } });
      if (part.type === 'output_text') {
        event('response.output_text.delta', { ...at, delta: text, logprobs: [] });
        event('response.output_text.done', { ...at, text, logprobs: [] });
      } else if (part.type === 'refusal') {
        event('response.refusal.delta', { ...at, delta: text });
        event('response.refusal.done', { ...at, refusal: text });
      }
      event('response.content_part.done', { ...at, part });
    });
  } else if (item.type === 'function_call') {
    event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
    event('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: item.arguments ?? '' });
    event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: item.arguments ?? '' });
  } else event('response.output_item.added', { output_index: outputIndex, item });
  event('response.output_item.done', { output_index: outputIndex, item });
}

/** A Responses response as its events: created, in progress, each output item, completed (with the usage). */
function responsesEvents(answer: Json): string[] {
  const out: string[] = [];
  let sequence = 0;
  const event = (type: string, data: Json) => out.push(sse({ type, sequence_number: sequence++, ...data }, type));
  const { cost: _cost, ...withoutCost } = answer;
  const pending = { ...withoutCost, status: 'in_progress', output: [], usage: null };
  event('response.created', { response: pending });
  event('response.in_progress', { response: pending });
  (answer.output as Json[] | undefined)?.forEach((item, index) => itemEvents(item, index, event));
  event(answer.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: answer });
  return out;
}

/** Whether the cache makes streams in `dialect` (the chat dialects; a relayed family's stream is a miss). */
export const replays = (dialect: string) => dialect === 'openai-chat' || dialect === 'anthropic-messages' || dialect === 'openai-responses';

/**
 * The event stream of a cached JSON answer in `dialect`; undefined for a dialect whose streams the cache does not make
 * (a relayed family's: such a request is a miss). `answer` already carries the hit's cost.
 */
export function replayEvents(dialect: string, answer: Json, request: Json, cost: Cost | undefined): string | undefined {
  if (dialect === 'openai-chat') return chatEvents(answer, request, cost).join('');
  if (dialect === 'anthropic-messages') return messagesEvents(answer, cost).join('');
  if (dialect === 'openai-responses') return responsesEvents(answer).join('');
  return undefined;
}

/** A stored event stream with every event's cost set to what the hit was charged. */
export function restampStream(text: string, cost: Cost): string {
  return text
    .split('\n\n')
    .map((block) => {
      if (!block.includes('"cost"')) return block;
      return block.replace(/^data: (.*)$/m, (line, data: string) => {
        try {
          return `data: ${JSON.stringify(withHitCost(JSON.parse(data), cost))}`;
        } catch {
          return line;
        }
      });
    })
    .join('\n\n');
}

/** Whether a captured event stream in `dialect` ran to its end (its closing event, no error event): only such a stream is kept. */
export function streamComplete(dialect: string, text: string): boolean {
  if (/^event: error$/m.test(text) || /^data: \{"error"/m.test(text)) return false;
  if (dialect === 'openai-chat') return /^data: \[DONE\]$/m.test(text);
  if (dialect === 'anthropic-messages') return /^event: message_stop$/m.test(text);
  if (dialect === 'openai-responses') return /^event: response\.completed$/m.test(text) || /"type":"response\.completed"/.test(text);
  return false;
}
