// Same dialect on both sides: an Anthropic Messages client to an Anthropic Messages operation. The model id is mapped and the
// cost added (to the answer, or to message_delta); usage is read by the pipeline as the protocol declares; nothing else changes.
import { anthropicEnvelope, type GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { ChatTranslator, StreamMapper } from '../translator.js';
import { costOf, jsonObject, relayedAnswer, relayedBody, scrubbedError } from '../passthrough.js';

export const anthropicMessagesPassthrough: ChatTranslator = {
  operation: 'chat',
  request: (body, ctx) => relayedBody(body, ctx),
  response: (body, ctx) => relayedAnswer(body, ctx),
  stream(ctx) {
    const mapper: StreamMapper = {
      push(event: SseEvent, parse) {
        // Only the two events that carry the model or the final usage are parsed; the rest go out byte for byte.
        if (event.event === 'message_start') {
          const data = jsonObject(parse(), ctx);
          const message = jsonObject(data.message, ctx);
          data.message = { ...message, model: ctx.clientModel };
          return [{ event: event.event, data: JSON.stringify(data) }];
        }
        if (event.event === 'message_delta') return [{ event: event.event, data: JSON.stringify({ ...jsonObject(parse(), ctx), ...costOf(ctx) }) }];
        if (event.event === 'error') return [{ event: event.event, data: JSON.stringify(scrubbedError(jsonObject(parse(), ctx), ctx)) }];
        return [event];
      },
      end: () => [],
      fail: (error: GatewayError) => [{ event: 'error', data: JSON.stringify(anthropicEnvelope(error)) }],
    };
    return mapper;
  },
};
