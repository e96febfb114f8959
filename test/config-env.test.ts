// ${VAR} and ${VAR:-default} in config values (src/config/env.ts), a default holding references of its own included.
import { describe, expect, it } from 'vitest';
import { interpolate, interpolateValue } from '../src/config/env.js';

const env = { REGION: 'eu-west-3', ENDPOINT: 'https://override.example', EMPTY: '', PORT: '8080' };

describe('config interpolation', () => {
  it('reads variables, and a default when one is unset or empty', () => {
    expect(interpolate('${REGION}', env)).toBe('eu-west-3');
    expect(interpolate('a-${UNSET:-b}-${EMPTY:-c}', env)).toBe('a-b-c');
    expect(interpolate('${UNSET}', env)).toBe('');
  });

  it('expands references inside a default (an endpoint whose default host names the region)', () => {
    expect(interpolate('${UNSET:-https://bedrock-runtime.${REGION}.amazonaws.com}', env)).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com');
    expect(interpolate('${ENDPOINT:-https://bedrock-runtime.${REGION}.amazonaws.com}/v1', env)).toBe('https://override.example/v1');
    expect(interpolate('${A:-${B:-${REGION}}}', env)).toBe('eu-west-3');
  });

  it('leaves text that is not a reference as it is', () => {
    expect(interpolate('$REGION ${ not ${UNSET:-unclosed', env)).toBe('$REGION ${ not ${UNSET:-unclosed');
  });

  it('keeps a whole-reference number numeric, nested default or not', () => {
    expect(interpolateValue({ port: '${PORT}', other: '${UNSET:-${PORT}}' }, env)).toEqual({ port: 8080, other: 8080 });
  });
});
