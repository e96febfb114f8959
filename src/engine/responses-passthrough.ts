// Same dialect on both sides: a Responses client to a Responses operation. The model id and the cost change; usage is the pipeline's.
import { DEFAULT_MAX_TOKENS } from '../billing/estimate.js';
import { openaiEnvelope, type GatewayError } from '../errors.js';
import type { SseEvent } from './sse.js';
import type { ChatTranslator, StreamMapper } from './translator.js';
import { costOf, jsonObject, scrubbedError, upstreamModelOf } from './passthrough.js';

export const responsesPassthrough: ChatTranslator = {
  operation: 'responses',
  request(body, ctx) {
    // The reservation assumed this bound; without it upstream the worst case would be unbounded.
    return { ...body, model: upstreamModelOf(ctx), ...(body.max_output_tokens == null ? { max_output_tokens: DEFAULT_MAX_TOKENS } : {}) };
  },
  response: (body, ctx) => ({ ...body, model: ctx.clientModel, ...costOf(ctx) }),
  stream(ctx) {
    const mapper: StreamMapper = {
      push(event: SseEvent, parse) {
        // Events that carry the whole response (created, in_progress, completed, failed, incomplete) name the model.
        if (event.data.includes('"response":{')) {
          const data = jsonObject(parse(), ctx);
          const response = jsonObject(data.response, ctx);
          data.response = { ...response, model: ctx.clientModel, ...(event.event === 'response.completed' ? costOf(ctx) : {}) };
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
