// Same dialect on both sides: an Anthropic Messages client to an Anthropic Messages operation. The model id is mapped and the
// cost added (to the answer, or to message_delta); usage is read by the pipeline as the protocol declares; nothing else changes.
import { anthropicEnvelope, type GatewayError } from '../../base/errors.js';
import type { SseEvent } from '../sse.js';
import type { ChatTranslator, StreamMapper } from '../translator.js';
import { costOf, jsonObject, relayedAnswer, relayedBody, scrubbedError } from '../passthrough.js';

/** Characters of relayed delta JSON counted as one output token (English text runs about four characters a token). */
const BYTES_PER_TOKEN = 4;

export const anthropicMessagesPassthrough: ChatTranslator = {
  operation: 'chat',
  request: (body, ctx) => relayedBody(body, ctx),
  response: (body, ctx) => relayedAnswer(body, ctx),
  stream(ctx) {
    // Bytes of the content deltas relayed: a stream cut short is charged their tokens as its output (an estimate that errs high).
    let streamed = 0;
    const mapper: StreamMapper = {
      push(event: SseEvent, parse) {
        if (event.event === 'content_block_delta') {
          streamed += event.data.length;
          return [event];
        }
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
      streamedOutputTokens: () => Math.ceil(streamed / BYTES_PER_TOKEN),
      fail: (error: GatewayError) => [{ event: 'error', data: JSON.stringify(anthropicEnvelope(error)) }],
    };
    return mapper;
  },
};
