// The translation engine's code parts: the named filters the mappings call.
import { describe, expect, it } from 'vitest';
import { filters } from '../src/engine/filters/messages.js';
import { filters as carriedFilters } from '../src/engine/filters/carried-state.js';
import { filters as converseFilters } from '../src/engine/filters/converse.js';
import { filters as responsesFilters } from '../src/engine/filters/responses.js';
import { TranslationError } from '../src/base/errors.js';

describe('messages filters', () => {
  it('refuse throws a TranslationError with the value in its message', () => {
    expect(() => filters.refuse('document', 'blocks of type %s are refused')).toThrow(new TranslationError('blocks of type "document" are refused'));
  });

  it('refuse names the field when given one, and echoes at most 64 characters of the value', () => {
    let caught: TranslationError | undefined;
    try {
      filters.refuse('x'.repeat(10_000), 'tools of type %s are refused', 'tools');
    } catch (err) {
      caught = err as TranslationError;
    }
    expect(caught?.param).toBe('tools');
    expect(caught?.message).toBe(`tools of type "${'x'.repeat(63)}... are refused`);
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

describe('responses filters', () => {
  it('parts_text joins input_text and output_text parts, reads refusals, and refuses any other part naming the field', () => {
    expect(responsesFilters.parts_text('plain')).toBe('plain');
    expect(responsesFilters.parts_text([{ type: 'input_text', text: 'a' }, { type: 'output_text', text: 'b' }, { type: 'refusal', refusal: 'no' }])).toBe('abno');
    expect(() => responsesFilters.parts_text([{ type: 'input_image', image_url: 'data:image/png;base64,AA' }], 'input')).toThrow(expect.objectContaining({ param: 'input' }));
  });

  it('runs_of groups consecutive items of one type and leaves every other item alone', () => {
    const [u, c1, c2, o1, c3] = [{ type: 'message' }, { type: 'function_call', n: 1 }, { type: 'function_call', n: 2 }, { type: 'function_call_output' }, { type: 'function_call', n: 3 }];
    expect(responsesFilters.runs_of([u, c1, c2, o1, c3], 'function_call')).toEqual([[u], [c1, c2], [o1], [c3]]);
    expect(responsesFilters.runs_of([u, u], 'function_call')).toEqual([[u], [u]]);
    expect(responsesFilters.runs_of(undefined, 'function_call')).toEqual([]);
  });

  it('remote_image_url takes image data URLs and https on the default port, and refuses the rest', () => {
    expect(responsesFilters.remote_image_url('data:image/png;base64,iVBO')).toBe('data:image/png;base64,iVBO');
    expect(responsesFilters.remote_image_url('https://example.com/a.png')).toBe('https://example.com/a.png');
    for (const url of ['http://example.com/a.png', 'https://example.com:8443/a.png', 'https://user:pw@example.com/a.png', 'file:///etc/passwd', 'data:text/html;base64,PGI+', '', undefined]) {
      expect(() => responsesFilters.remote_image_url(url)).toThrow(TranslationError);
    }
  });
});

describe('state carried in a tool call id', () => {
  it('round-trips a base64 signature through an id of letters, digits and underscores', () => {
    const id = carriedFilters.carry_in_id('call_get_weather_6e1e312d', 'c2lnbmF0dXJl+/8=');
    expect(id).toMatch(/^call_get_weather_6e1e312d_ts[0-9a-f]+$/);
    expect(carriedFilters.carried_in_id(id)).toBe('c2lnbmF0dXJl+/8=');
  });

  it('leaves an id without state unchanged, and finds none in an id a client made', () => {
    expect(carriedFilters.carry_in_id('call_1', undefined)).toBe('call_1');
    expect(carriedFilters.carry_in_id('call_1', '')).toBe('call_1');
    for (const id of ['call_1', 'toolu_01A09q90qw90lq917835lq9', 'call_tsdata_6e1e312d', 'call_x_ts', 'call_x_tsabc', 'call_x_tszz', undefined]) expect(carriedFilters.carried_in_id(id)).toBeNull();
  });
});

describe('merge_roles', () => {
  it('joins the lists of messages whose role repeats, under content or the key it is given', () => {
    const turns = [{ role: 'user', parts: [{ text: 'a' }] }, { role: 'user', parts: [{ text: 'b' }] }, { role: 'model', parts: [{ text: 'c' }] }];
    expect(converseFilters.merge_roles(turns, 'parts')).toEqual([{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }, { role: 'model', parts: [{ text: 'c' }] }]);
    expect(converseFilters.merge_roles([{ role: 'user', content: [1] }, { role: 'user', content: [2] }])).toEqual([{ role: 'user', content: [1, 2] }]);
  });
});
