// Filters the mappings to Bedrock's Converse API need where Liquid alone cannot say it: image bytes and alternating turns.
// Converse: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html (ImageBlock, Message).
import { clientValue, TranslationError } from '../../base/errors.js';

/** The image formats an ImageBlock takes, by media type. */
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

interface Turn {
  role?: unknown;
  content?: unknown;
}

function imageBlock(mediaType: string, base64: string, param: string) {
  const format = IMAGE_FORMATS[mediaType.toLowerCase()];
  if (!format) throw new TranslationError(`images of type ${clientValue(mediaType)} cannot be sent to Bedrock's Converse API, which takes png, jpeg, gif and webp`, param);
  return { format, source: { bytes: base64 } };
}

export const filters = {
  /**
   * An image as a Converse ImageBlock (`{format, source: {bytes}}`, the bytes base64 in JSON): from a data: URL (an OpenAI
   * image_url or Responses input_image; a workspace file id became one in the inputs stage) or an Anthropic image source.
   * Converse takes image bytes only, so a remote URL is refused, naming `param`.
   */
  converse_image: (value: unknown, param: unknown = 'messages') => {
    const where = String(param);
    if (value && typeof value === 'object') {
      const source = value as { type?: string; media_type?: string; data?: string };
      if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') return imageBlock(source.media_type, source.data, where);
      throw new TranslationError(`image sources of type ${clientValue(String(source.type))} cannot be sent to Bedrock's Converse API, which takes the image's bytes: send it as base64`, where);
    }
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(typeof value === 'string' ? value : '');
    if (!data) throw new TranslationError("images given by URL cannot be sent to Bedrock's Converse API, which takes the image's bytes: send a data: URL or a file id of this gateway", where);
    return imageBlock(data[1], data[2], where);
  },

  /**
   * Messages whose role repeats merged into one (their lists under `key`, `content` by default, joined): Converse requires
   * user and assistant turns to alternate, and Gemini wants a turn's function responses in one content, where chat sends
   * each tool result as a message of its own and Messages may send two user turns in a row.
   */
  merge_roles: (value: unknown, key: unknown = 'content') => {
    if (!Array.isArray(value)) return [];
    const field = String(key);
    const merged: Record<string, unknown[] | unknown>[] = [];
    for (const turn of value as Turn[]) {
      const list = (turn as Record<string, unknown>)?.[field];
      const items = Array.isArray(list) ? list : [];
      const last = merged.at(-1);
      if (last && last.role === turn.role) (last[field] as unknown[]).push(...items);
      else merged.push({ role: turn.role, [field]: [...items] });
    }
    return merged;
  },
};
