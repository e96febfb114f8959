// Chooses the translator for a client dialect and an upstream protocol operation: by dialect pair, never by vendor.
import type { ModelRoute } from '../config/types.js';
import type { LoadedConfig } from './loaded-config.js';
import { TranslationError } from '../base/errors.js';
import { openaiChatPassthrough } from './openai-chat-passthrough.js';
import { anthropicMessagesPassthrough } from './translate/anthropic-passthrough.js';
import { declaredTranslator } from './translate/declared.js';
import { responsesPassthrough } from './responses-passthrough.js';
import type { ChatTranslator } from './translator.js';

const passthroughs: Record<string, ChatTranslator> = {
  'openai-chat': openaiChatPassthrough,
  'anthropic-messages': anthropicMessagesPassthrough,
  'openai-responses': responsesPassthrough,
};

/** Whether a translator is a same-dialect pass-through (the client's request relayed, its vendor headers forwarded). */
export const isPassthrough = (translator: ChatTranslator) => Object.values(passthroughs).includes(translator);

/** Whether the route's channel serves `operation`: its protocol declares it and the channel does not leave it out. */
export const servesOperation = (route: ModelRoute, operation: string) =>
  !!route.protocol.operations[operation] && (!route.channel.operations || route.channel.operations.includes(operation));

/** The dialect an operation speaks on a route (its own, else its protocol's); undefined when the channel does not serve it. */
export function operationDialect(route: ModelRoute, operation: string): string | undefined {
  if (!servesOperation(route, operation)) return undefined;
  const op = route.protocol.operations[operation];
  return op.dialect ?? route.protocol.dialect;
}

/** Pass-through when `operation` speaks the client's dialect; else the translation the protocol declares for that dialect. */
export function translatorFor(config: LoadedConfig, clientDialect: string, route: ModelRoute, operation = 'chat'): ChatTranslator {
  const translator =
    operationDialect(route, operation) === clientDialect ? passthroughs[clientDialect] : declaredTranslator(config, clientDialect, route);
  if (!translator || !servesOperation(route, translator.operation)) {
    throw new TranslationError(`model "${route.model.id}" is served by channel "${route.channel.id}", which cannot take ${clientDialect} requests`, 'model');
  }
  return translator;
}
