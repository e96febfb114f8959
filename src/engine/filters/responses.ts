// Filters the Responses <-> chat mappings need where Liquid alone cannot say it: part text, runs of tool calls, image URLs.
import { clientValue, TranslationError } from '../../errors.js';

type Item = Record<string, unknown>;

const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

export const filters = {
  /** The text of a string or of a list of text parts (`input_text`, `output_text`); any other part is refused, naming `param`. */
  parts_text: (value: unknown, param: unknown = 'input') => {
    if (typeof value === 'string') return value;
    if (!Array.isArray(value)) return '';
    return (value as Item[])
      .map((part) => {
        if (part.type === 'refusal') return String(part.refusal ?? '');
        if (!TEXT_PARTS.has(String(part.type))) throw new TranslationError(`${clientValue(String(part.type))} parts cannot be sent where the channel takes only text`, String(param));
        return String(part.text ?? '');
      })
      .join('');
  },

  /**
   * Input items in runs: consecutive items of type `type` form one group, every other item is a group of its own. A chat
   * assistant turn carries all its tool calls at once, so a run of `function_call` items becomes one message.
   */
  runs_of: (value: unknown, type: unknown) => {
    if (!Array.isArray(value)) return [];
    const groups: Item[][] = [];
    for (const item of value as Item[]) {
      const last = groups.at(-1);
      if (last && item?.type === type && last[0]?.type === type) last.push(item);
      else groups.push([item]);
    }
    return groups;
  },

  /**
   * An `input_image` URL the channel may fetch: a data: URL of an image (a workspace file becomes one in the inputs stage),
   * or https on the default port without credentials. Anything else (http, file:, a private port) is refused.
   */
  remote_image_url: (value: unknown) => {
    const text = typeof value === 'string' ? value : '';
    if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(text)) return text;
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'https:' || url.port !== '' || url.username || url.password) {
      throw new TranslationError('input_image needs a file_id, an https image_url on the default port without credentials, or a data:image URL', 'input');
    }
    return text;
  },
};
