// Same dialect on both sides: an OpenAI chat client to an OpenAI chat operation. The model id is mapped (and usage asked for on a
// stream), the client's bytes otherwise relayed as sent; the answer gets its cost. Usage is the pipeline's.
import type { ChatTranslator, StreamMapper } from './translator.js';
import type { SseEvent } from './sse.js';
import type { GatewayError } from '../base/errors.js';
import { openaiEnvelope } from '../base/errors.js';
import { costOf, jsonObject, relayedAnswer, relayedBody, scrubbedError, upstreamModelOf } from './passthrough.js';

export const openaiChatPassthrough: ChatTranslator = {
  operation: 'chat',
  request(body, ctx) {
    // Billing needs usage even when the client did not ask for it on a stream (the usage chunk is then not passed on).
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    if (body.stream !== true || options?.include_usage === true) return relayedBody(body, ctx);
    return relayedBody(body, ctx, { stream_options: { ...(options && typeof options === 'object' ? options : {}), include_usage: true } });
  },
  response: (body, ctx) => relayedAnswer(body, ctx),
  stream(ctx, clientBody) {
    const clientWantsUsage = (clientBody.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const renameModel = upstreamModelOf(ctx) !== ctx.clientModel;
    // `"model":"<upstream id>"` can only be a key and its value in JSON text (quotes inside strings are escaped), so a
    // chunk that carries it in this exact spelling is renamed without being parsed; any other spelling is parsed.
    const upstreamPair = `"model":${JSON.stringify(upstreamModelOf(ctx))}`;
    const clientPair = `"model":${JSON.stringify(ctx.clientModel)}`;
    const mapper: StreamMapper = {
      push(event: SseEvent, parse) {
        if (event.data === '[DONE]') return [event];
        const hasUsage = event.data.includes('"usage"');
        const hasError = event.data.includes('"error"');
        // Chunks that need nothing changed are forwarded byte for byte.
        if (!renameModel && !hasUsage && !hasError) return [event];
        if (!hasUsage && !hasError && event.data.includes(upstreamPair) && !event.data.includes('"model": ')) return [{ data: event.data.split(upstreamPair).join(clientPair) }];
        const chunk = jsonObject(parse(), ctx);
        if (hasError && chunk.error) return [{ data: JSON.stringify(scrubbedError(chunk, ctx)) }];
        if (renameModel && typeof chunk.model === 'string') chunk.model = ctx.clientModel;
        if (chunk.usage) {
          if (!clientWantsUsage) {
            if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return [];
            delete chunk.usage;
          } else Object.assign(chunk, costOf(ctx));
        }
        return [{ data: JSON.stringify(chunk) }];
      },
      end: () => [],
      fail: (error: GatewayError) => [{ data: JSON.stringify(openaiEnvelope(error)) }],
    };
    return mapper;
  },
};
