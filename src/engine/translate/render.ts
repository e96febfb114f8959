// The one way code renders a mapping compiled at load: a filter's refusal surfaces as its own typed error, anything else as a mapping failure.
import type { TemplateSet } from '../liquid.js';
import { GatewayError } from '../../base/errors.js';

export type Renderer = (scope: object) => unknown;

/** A renderer for the mapping compiled from `node` (a node of a protocol's config); `where` names it in errors. */
export function renderer(config: { templates: TemplateSet }, node: unknown, where: string): Renderer {
  const mapping = config.templates.mapping(node);
  return (scope) => {
    try {
      return mapping.render(scope);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw new GatewayError('translation_failed', 500, 'server_error', `${where} failed to render: ${(err as Error)?.message ?? err}`, {}, false);
    }
  };
}
