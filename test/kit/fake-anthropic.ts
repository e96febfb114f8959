// The fake upstream's Anthropic Messages route: answers from the same script as the chat route, as a message or as events.
import type { ServerResponse } from 'node:http';
import { json, writeSse, type ChatScript, type RecordedRequest } from './fake-http.js';

const stopReasons: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };

/** POST .../messages. */
export async function anthropicMessages(req: RecordedRequest, res: ServerResponse, fake: { chat: ChatScript }): Promise<boolean> {
  if (req.method !== 'POST' || !req.path.endsWith('/messages')) return false;
  const { text, usage, toolCalls, finishReason } = fake.chat;
  const id = 'msg_fake';
  const model = req.body?.model ?? 'unknown';
  const stopReason = finishReason ? (stopReasons[finishReason] ?? finishReason) : toolCalls?.length ? 'tool_use' : 'end_turn';
  const content = [
    ...(text ? [{ type: 'text', text }] : []),
    ...(toolCalls ?? []).map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: JSON.parse(t.arguments || '{}') })),
  ];
  const usageBody = {
    input_tokens: usage.prompt_tokens - (usage.cached_tokens ?? 0),
    output_tokens: usage.completion_tokens,
    cache_read_input_tokens: usage.cached_tokens ?? 0,
    cache_creation_input_tokens: 0,
  };
  if (!req.body?.stream) {
    json(res, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: usageBody });
    return true;
  }
  const events: { event: string; data: unknown }[] = [
    { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usageBody, output_tokens: 1 } } } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      for (const piece of text.match(/.{1,8}/gs) ?? []) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
    } else {
      const call = toolCalls!.find((t) => t.id === (block as { id: string }).id)!;
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } });
      for (const piece of call.arguments.match(/.{1,10}/gs) ?? []) {
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } } });
      }
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.completion_tokens } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  await writeSse(res, events);
  return true;
}
