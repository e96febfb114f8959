// Checks compiled leaves against liquidjs's public evalValueSync: on in tests and with MAPPING_VERIFY=1, off when serving.
import { isDeepStrictEqual } from 'node:util';
import { toValue, type Liquid } from 'liquidjs';
import type { Expr, Frame } from './expression.js';

/** Shared by every mapping of a config. */
export interface Verification {
  verify: boolean;
  mismatches: string[];
  /** Benchmarks only: every leaf is evaluated by liquidjs's evalValueSync alone. */
  interpret?: boolean;
}

/**
 * The verification of the mapping rendering now. A compiled mapping can serve several configs (TemplateSet shares them by
 * content between the loads of a process), each with its own verification: leaves are compiled against
 * `renderingVerification`, which reads the one a config's mapping sets around its render (renderUnder).
 */
let rendering: Verification = { verify: false, mismatches: [] };
export const renderingVerification: Verification = {
  get verify() {
    return rendering.verify;
  },
  get mismatches() {
    return rendering.mismatches;
  },
  get interpret() {
    return rendering.interpret;
  },
};

/** Runs `render` with `verification` as the rendering one (nested renders restore the outer one). */
export function renderUnder<T>(verification: Verification, render: () => T): T {
  const outer = rendering;
  rendering = verification;
  try {
    return render();
  } finally {
    rendering = outer;
  }
}

const messageOf = (err: unknown) => String((err as Error)?.message ?? err);
const shown = (value: unknown, error: unknown) => (error ? `throws ${messageOf(error)}` : (JSON.stringify(toValue(value)) ?? 'undefined'));

/**
 * `expr` (compiled from `source`, with `locals` bound by $let and $for) as a leaf that, while verification is on, is also
 * evaluated by liquidjs over the same names; any difference in value or error is recorded and thrown.
 */
export function checkedLeaf(expr: Expr, source: string, locals: [string, number][], liquid: Liquid, verification: Verification, pointer: string): Expr {
  const scopeOf = (f: Frame) => {
    const env: Record<string, unknown> = { ...f.env };
    for (const [name, slot] of locals) env[name] = f.slots[slot];
    return env;
  };
  return (f) => {
    if (!verification.verify) return verification.interpret ? liquid.evalValueSync(source, scopeOf(f)) : expr(f);
    let got: unknown;
    let want: unknown;
    let gotError: unknown;
    let wantError: unknown;
    try {
      got = expr(f);
    } catch (err) {
      gotError = err;
    }
    try {
      want = liquid.evalValueSync(source, scopeOf(f));
    } catch (err) {
      wantError = err;
    }
    const same = gotError || wantError ? messageOf(gotError) === messageOf(wantError) : isDeepStrictEqual(toValue(got), toValue(want));
    if (!same) {
      const message = `${pointer} {{ ${source.trim()} }}: compiled ${shown(got, gotError)}, liquidjs ${shown(want, wantError)}`;
      verification.mismatches.push(message);
      throw new Error(`mapping differs from liquidjs: ${message}`);
    }
    if (gotError) throw gotError;
    return got;
  };
}
