// Packages loaded on first use (src/base/load-on-use.ts): loaded once, and a missing one is a named error that says
// what needed it, never a TypeError at the call that uses it.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../src/base/errors.js';
import { importOnUse, ModuleMissingError, requireOnUse } from '../src/base/load-on-use.js';

describe('requireOnUse', () => {
  it('loads nothing until called, then once', () => {
    const loads: string[] = [];
    const lib = requireOnUse<{ n: number }>('some-package', 'a test', (specifier) => (loads.push(specifier), { n: 1 }));
    expect(loads).toEqual([]);
    expect(lib().n).toBe(1);
    expect(lib().n).toBe(1);
    expect(loads).toEqual(['some-package']);
  });

  it('a package that is not installed is a ModuleMissingError naming it and what needed it, a 500 no client reads', () => {
    const lib = requireOnUse('no-such-package-of-this-gateway', 'a pattern guardrail with a regex');
    let thrown: unknown;
    try {
      lib();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ModuleMissingError);
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ code: 'module_missing', statusCode: 500, expose: false, specifier: 'no-such-package-of-this-gateway' });
    expect((thrown as Error).message).toBe('a pattern guardrail with a regex needs the package no-such-package-of-this-gateway, which is not installed (run npm install)');
  });

  it('a file missing inside an installed package is that package\'s own failure, passed on as it is', () => {
    const inner = Object.assign(new Error("Cannot find module './lib/part.js'"), { code: 'MODULE_NOT_FOUND' });
    const lib = requireOnUse('broken-package', 'a test', () => {
      throw inner;
    });
    expect(() => lib()).toThrow(inner);
  });
});

describe('importOnUse', () => {
  it('a missing ES module rejects with ModuleMissingError, and the next call tries again', async () => {
    let calls = 0;
    const missing = Object.assign(new Error("Cannot find package 'oidc-lib' imported from /x.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const lib = importOnUse(async () => {
      calls++;
      if (calls === 1) throw missing;
      return { ok: true };
    }, 'oidc-lib', 'single sign-on');
    await expect(lib()).rejects.toMatchObject({ name: 'ModuleMissingError', code: 'module_missing', message: 'single sign-on needs the package oidc-lib, which is not installed (run npm install)' });
    await expect(lib()).resolves.toEqual({ ok: true });
    await lib();
    expect(calls).toBe(2);
  });
});
