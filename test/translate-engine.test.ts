// The translation engine's code parts: the named filters the mappings call.
import { describe, expect, it } from 'vitest';
import { filters } from '../src/engine/filters/messages.js';
import { TranslationError } from '../src/errors.js';

describe('messages filters', () => {
  it('refuse throws a TranslationError with the value in its message', () => {
    expect(() => filters.refuse('document', 'blocks of type %s are refused')).toThrow(new TranslationError('blocks of type "document" are refused'));
  });

  it('text_of joins text blocks and refuses any other block', () => {
    expect(filters.text_of([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], '\n')).toBe('a\nb');
    expect(filters.text_of('plain')).toBe('plain');
    expect(() => filters.text_of([{ type: 'image' }])).toThrow(TranslationError);
  });

  it('parse_json reads tool arguments as an object and refuses anything else', () => {
    expect(filters.parse_json('{"city":"Paris"}')).toEqual({ city: 'Paris' });
    expect(filters.parse_json('')).toEqual({});
    expect(() => filters.parse_json('[1]')).toThrow(TranslationError);
    expect(() => filters.parse_json('{"city":')).toThrow(TranslationError);
  });

  it('image_url and image_source convert between base64 sources and data URLs', () => {
    const source = { type: 'base64', media_type: 'image/png', data: 'iVBO' };
    expect(filters.image_url(source)).toBe('data:image/png;base64,iVBO');
    expect(filters.image_source('data:image/png;base64,iVBO')).toEqual(source);
    expect(filters.image_source('https://example.com/a.png')).toEqual({ type: 'url', url: 'https://example.com/a.png' });
    expect(() => filters.image_url({ type: 'file', file_id: 'f' })).toThrow(TranslationError);
  });

  it('as_array wraps a single stop string', () => {
    expect(filters.as_array('END')).toEqual(['END']);
    expect(filters.as_array(['a', 'b'])).toEqual(['a', 'b']);
  });
});
