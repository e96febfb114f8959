// Filters the messages <-> chat mappings need where Liquid alone cannot say it: refusals, block text, JSON and image sources.
import { createHash } from 'node:crypto';
import { ECHO_LIMIT, TranslationError } from '../../base/errors.js';

interface Block {
  type?: string;
  text?: string;
}

const isPresent = (v: unknown) => v !== undefined && v !== null;

export const filters = {
  /** Refuses the request: `{{ b.type | refuse: 'blocks of type %s cannot be sent to this channel' }}`; a second argument names the field (`param`). */
  refuse: (value: unknown, reason: unknown, param?: unknown) => {
    // The value is the client's: echoed as JSON, cut to the echo limit (a 1 MB tool type is not repeated back).
    const shown = JSON.stringify(value) ?? 'null';
    const echoed = shown.length > ECHO_LIMIT ? `${shown.slice(0, ECHO_LIMIT)}...` : shown;
    throw new TranslationError(String(reason ?? 'this request cannot be translated').replace('%s', echoed), typeof param === 'string' ? param : null);
  },

  /** The text of a string or of a list of text blocks; any other block is refused. */
  text_of: (value: unknown, separator: unknown = '\n') => {
    if (typeof value === 'string') return value;
    if (!Array.isArray(value)) return '';
    return (value as Block[])
      .map((b) => {
        if (b.type !== 'text') throw new TranslationError(`a ${JSON.stringify(b.type)} block cannot be sent where the channel takes only text`);
        return b.text ?? '';
      })
      .join(String(separator));
  },

  /**
   * An end-user id within what the other vendor accepts (`limit` characters): kept when it fits, else its SHA-256 in hex,
   * cut to the limit, which stays one stable opaque id per user.
   */
  bounded_id: (value: unknown, limit: unknown) => {
    if (value === undefined || value === null || value === '') return null;
    const text = String(value);
    const most = Number(limit);
    return text.length <= most ? text : createHash('sha256').update(text).digest('hex').slice(0, most);
  },

  /** A string or a list as a list (OpenAI `stop` may be either). */
  as_array: (value: unknown) => (Array.isArray(value) ? value : isPresent(value) ? [value] : []),

  /** Parses a JSON object from text (tool-call arguments); an empty string is `{}`. */
  parse_json: (value: unknown) => {
    if (value === undefined || value === null || value === '') return {};
    if (typeof value !== 'string') return value;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new TranslationError(`tool call arguments are not valid JSON: ${value.slice(0, 80)}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TranslationError('tool call arguments must be a JSON object');
    return parsed;
  },

  /** An Anthropic image source as an OpenAI image URL (base64 becomes a data: URL). */
  image_url: (source: unknown) => {
    const s = (source ?? {}) as { type?: string; media_type?: string; data?: string; url?: string };
    if (s.type === 'base64') return `data:${s.media_type};base64,${s.data}`;
    if (s.type === 'url') return s.url;
    throw new TranslationError(`image source of type ${JSON.stringify(s.type)} cannot be sent to this channel`);
  },

  /** An OpenAI image URL as an Anthropic image source (a data: URL becomes base64). */
  image_source: (url: unknown) => {
    const text = String(url ?? '');
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(text);
    return data ? { type: 'base64', media_type: data[1], data: data[2] } : { type: 'url', url: text };
  },
};
