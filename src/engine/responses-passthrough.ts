// Same dialect on both sides: a Responses client to a Responses operation. The model id and the cost change; usage is the pipeline's.
import { openaiEnvelope, type GatewayError } from '../base/errors.js';
import type { SseEvent } from './sse.js';
import type { ChatTranslator, StreamMapper } from './translator.js';
import { costOf, jsonObject, relayedAnswer, relayedBody, scrubbedError } from './passthrough.js';

/** Events that end a response with its final usage: each carries the cost that was charged. */
const finalEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export const responsesPassthrough: ChatTranslator = {
  operation: 'responses',
  // The client's request, model mapped: no output bound is added (the estimate reads the model's limits instead).
  request: (body, ctx) => relayedBody(body, ctx),
  response: (body, ctx) => relayedAnswer(body, ctx),
  stream(ctx) {
    const mapper: StreamMapper = {
      push(event: SseEvent, parse) {
        // Events that carry the whole response (created, in_progress, completed, failed, incomplete) name the model.
        if (event.data.includes('"response":{')) {
          const data = jsonObject(parse(), ctx);
          const response = jsonObject(data.response, ctx);
          data.response = { ...response, model: ctx.clientModel, ...(finalEvents.has(event.event ?? '') ? costOf(ctx) : {}) };
          return [{ event: event.event, data: JSON.stringify(data) }];
        }
        if (event.event === 'error') return [{ event: event.event, data: JSON.stringify(scrubbedError({ error: jsonObject(parse(), ctx) }, ctx).error) }];
        return [event];
      },
      end: () => [],
      fail: (error: GatewayError) => {
        const { code, message, param } = openaiEnvelope(error).error;
        return [{ event: 'error', data: JSON.stringify({ type: 'error', code, message, param, sequence_number: 0 }) }];
      },
    };
    return mapper;
  },
};
