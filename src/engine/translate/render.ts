// Renders a mapping template to a value, turning a filter's refusal into its own typed error instead of Liquid's wrapper.
import type { LoadedConfig } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { parseRelaxedJson } from './relaxed-json.js';

export type Renderer = (scope: object) => unknown;

function unwrap(err: unknown): unknown {
  let current = err as { originalError?: unknown } | undefined;
  while (current && typeof current === 'object' && 'originalError' in current && current.originalError) current = current.originalError as typeof current;
  return current;
}

/** A renderer for a template compiled at load; failures surface as the GatewayError a filter threw, or as `onError`'s. */
export function renderer(config: LoadedConfig, source: string, where: string): Renderer {
  const template = config.templates.get(source);
  return (scope) => {
    let text: string;
    try {
      text = template.render(scope);
    } catch (err) {
      const cause = unwrap(err);
      if (cause instanceof GatewayError) throw cause;
      throw new GatewayError('translation_failed', 500, 'server_error', `${where} failed to render: ${(cause as Error)?.message ?? cause}`, {}, false);
    }
    try {
      return parseRelaxedJson(text);
    } catch (err) {
      throw new GatewayError('translation_failed', 500, 'server_error', `${where} rendered invalid JSON: ${(err as Error).message}`, {}, false);
    }
  };
}
