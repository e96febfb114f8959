// Chooses the translator for a client dialect and an upstream protocol: by dialect pair, never by vendor.
import type { LoadedConfig, ModelRoute } from '../config/types.js';
import { TranslationError } from '../errors.js';
import { openaiChatPassthrough } from './openai-chat-passthrough.js';
import { anthropicMessagesPassthrough } from './translate/anthropic-passthrough.js';
import { declaredTranslator } from './translate/declared.js';
import type { ChatTranslator } from './translator.js';

const passthroughs: Record<string, ChatTranslator> = {
  'openai-chat': openaiChatPassthrough,
  'anthropic-messages': anthropicMessagesPassthrough,
};

/** Translators declared as data in protocol YAML are registered here by the translation engine. */
export type DeclaredTranslatorLookup = (config: LoadedConfig, clientDialect: string, route: ModelRoute) => ChatTranslator | undefined;
let declared: DeclaredTranslatorLookup = declaredTranslator;

export function setDeclaredTranslators(lookup: DeclaredTranslatorLookup): void {
  declared = lookup;
}

export function translatorFor(config: LoadedConfig, clientDialect: string, route: ModelRoute): ChatTranslator {
  const translator =
    route.protocol.dialect === clientDialect ? passthroughs[clientDialect] : declared(config, clientDialect, route);
  if (!translator) {
    throw new TranslationError(`model "${route.model.id}" is served by channel "${route.channel.id}", which cannot take ${clientDialect} requests`, 'model');
  }
  return translator;
}
