// Image requests to a vendor with an API of its own (Google's Imagen `:predict`, Gemini's `:generateContent`): the protocol's
// declared `translations.openai-images` maps the OpenAI images request to the vendor's body and its answer back to an
// OpenAI images answer (`data[].b64_json`), whose media its `outputs` archive like a pass-through's. Data, never a vendor name.
import { renderCost, tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { ModelRoute } from '../config/types.js';
import { TranslationError } from '../base/errors.js';
import { declaredTranslator } from '../engine/translate/declared.js';
import { operationDialect, servesOperation } from '../engine/translators.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';

/**
 * How an images request reaches `route`: undefined when its `operation` speaks the client's dialect (pass-through), else
 * the protocol's declared translation for it. An edit (a multipart form) is only passed through.
 */
export function imagesTranslatorFor(config: LoadedConfig, dialect: string, route: ModelRoute, operation: string, form: boolean): ChatTranslator | undefined {
  if (operationDialect(route, operation) === dialect) return undefined;
  const translator = form ? undefined : declaredTranslator(config, dialect, route);
  if (!translator || !servesOperation(route, translator.operation)) {
    throw new TranslationError(`model "${route.model.id}" is served by channel "${route.channel.id}", which has no ${dialect} operation "${operation}"`, 'model');
  }
  return translator;
}

/** What a translated images request and answer see: the route, the client's body and model, the usage read so far. */
export function imagesTranslateContext(route: ModelRoute, request: Record<string, unknown>, requestId: string, usage?: () => TokenUsage | undefined): TranslateContext {
  return {
    route,
    clientModel: String(request.model),
    requestId,
    request,
    usage: () => usage?.(),
    costOf: (counts) => renderCost({ micros: tokenCostMicros(route.model.price, counts), currency: route.model.price.currency }),
  };
}
