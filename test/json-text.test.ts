// replaceTopLevel: top-level members replaced in a JSON text, every other byte kept (the pass-through's answer and body);
// the texts kept on a parsed body and an outgoing document, which nothing that copies or lists an object sees.
import { describe, expect, it } from 'vitest';
import { encodedTextOf, forgetSourceText, keepSourceText, replaceTopLevel, sendAsText, sourceTextOf } from '../src/http/json-text.js';

describe('replaceTopLevel', () => {
  it('replaces the named members and keeps every other byte, numbers spelled as they came', () => {
    const text = '{ "id" : "x", "model":"up",\n "seed": 9007199254740993, "n": 1.50 }';
    expect(replaceTopLevel(text, { model: '"client"' })).toBe('{ "id" : "x", "model":"client",\n "seed": 9007199254740993, "n": 1.50 }');
  });

  it('appends the members the object lacks, in the order given', () => {
    expect(replaceTopLevel('{"a":1}', { b: '2', c: '"3"' })).toBe('{"a":1,"b":2,"c":"3"}');
    expect(replaceTopLevel('{}', { b: '2' })).toBe('{"b":2}');
  });

  it('skips strings with escaped quotes and runs of backslashes, and braces inside strings', () => {
    const text = String.raw`{"a":"x\\","b":"y\"z\\\"}","c":{"d":"}{]["},"model":"m"}`;
    expect(JSON.parse(replaceTopLevel(text, { model: '"n"' })!)).toEqual({ ...JSON.parse(text), model: 'n' });
  });

  it('matches member names written with escapes, and never a name that only starts the same', () => {
    expect(replaceTopLevel(String.raw`{"mod\u0065l":"m","models":"k"}`, { model: '"n"' })).toBe(String.raw`{"mod\u0065l":"n","models":"k"}`);
    expect(replaceTopLevel('{"mode":"m"}', { model: '"n"' })).toBe('{"mode":"m","model":"n"}');
  });

  it('gives up on what is not a JSON object', () => {
    expect(replaceTopLevel('[1]', { a: '1' })).toBeUndefined();
    expect(replaceTopLevel('{"a":"unterminated', { a: '1' })).toBeUndefined();
  });
});

describe('texts kept on objects', () => {
  it('rides on the object itself, unseen by what copies, lists or serialises it', () => {
    const text = '{"model":"m","seed":9007199254740993}';
    const body = JSON.parse(text) as Record<string, unknown>;
    keepSourceText(body, text);
    expect(sourceTextOf(body)).toBe(text);
    // A copy (a stage that changed a member) never claims the client's text: it would send the old bytes.
    expect(sourceTextOf({ ...body, model: 'n' })).toBeUndefined();
    expect(sourceTextOf(Object.assign({}, body))).toBeUndefined();
    expect(sourceTextOf(structuredClone(body))).toBeUndefined();
    expect(Object.keys(body)).toEqual(['model', 'seed']);
    expect(Object.getOwnPropertySymbols(body)).toEqual([]);
    expect(Object.getOwnPropertyNames(body)).toEqual(['model', 'seed']);
    expect(JSON.stringify(body)).toBe('{"model":"m","seed":9007199254740992}');
    expect(encodedTextOf(body)).toBeUndefined();
  });

  it('is forgotten when a stage changes the body in place, and kept again when set again', () => {
    const body = { model: 'm' };
    keepSourceText(body, '{"model":"m"}');
    forgetSourceText(body);
    expect(sourceTextOf(body)).toBeUndefined();
    keepSourceText(body, '{ "model": "m" }');
    expect(sourceTextOf(body)).toBe('{ "model": "m" }');
    forgetSourceText({});
  });

  it('keeps a document\'s outgoing text apart from its source text, on frozen objects too', () => {
    const document = Object.freeze({ model: 'm' });
    sendAsText(document, '{"model":"m"}');
    expect(encodedTextOf(document)).toBe('{"model":"m"}');
    expect(sourceTextOf(document)).toBeUndefined();
    sendAsText(document, '{"model": "m"}');
    expect(encodedTextOf(document)).toBe('{"model": "m"}');
    expect(encodedTextOf({ ...document })).toBeUndefined();
    expect(encodedTextOf(null)).toBeUndefined();
    expect(encodedTextOf('text')).toBeUndefined();
  });

  it('keeps nothing for what is not a JSON object', () => {
    const list = [1, 2];
    keepSourceText(list, '[1,2]');
    expect(sourceTextOf(list)).toBeUndefined();
    keepSourceText(null, 'null');
  });
});
