// replaceTopLevel: top-level members replaced in a JSON text, every other byte kept (the pass-through's answer and body).
import { describe, expect, it } from 'vitest';
import { replaceTopLevel } from '../src/http/json-text.js';

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
