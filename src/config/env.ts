// Expands ${VAR} and ${VAR:-default} in config scalars from the environment.
import { parse as parseYamlScalar } from 'yaml';

const name = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * One `${VAR}` or `${VAR:-default}` at `start` (where `${` is), the default itself expanded, so a default may hold
 * references of its own (`${ENDPOINT:-https://${REGION}.example.com}`); undefined when the text there is not one.
 */
function referenceAt(text: string, start: number, env: NodeJS.ProcessEnv, unset?: string[]): { value: string; end: number } | undefined {
  const variable = name.exec(text.slice(start + 2))?.[0];
  if (!variable) return undefined;
  let at = start + 2 + variable.length;
  let fallback: string | undefined;
  // What the default itself leaves unset counts only when the default is used.
  const unsetInFallback: string[] = [];
  if (text.startsWith(':-', at)) {
    // The default runs to the brace that closes this reference: nested `${...}` are expanded, not ended on.
    let depth = 0;
    let end = at + 2;
    for (; end < text.length; end++) {
      if (text.startsWith('${', end)) depth++;
      else if (text[end] === '}' && depth-- === 0) break;
    }
    if (end >= text.length) return undefined;
    fallback = interpolate(text.slice(at + 2, end), env, unsetInFallback);
    at = end;
  }
  if (text[at] !== '}') return undefined;
  const value = env[variable];
  if (value !== undefined && value !== '') return { value, end: at + 1 };
  if (fallback === undefined) unset?.push(variable);
  else unset?.push(...unsetInFallback);
  return { value: fallback ?? '', end: at + 1 };
}

/** Expands the references in `text`; each variable read that is unset with no default is added to `unset`. */
export function interpolate(text: string, env: NodeJS.ProcessEnv, unset?: string[]): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf('${'); at >= 0; at = text.indexOf('${', at + 1)) {
    if (at < from) continue;
    const reference = referenceAt(text, at, env, unset);
    if (!reference) continue;
    out += text.slice(from, at) + reference.value;
    from = reference.end;
  }
  return out + text.slice(from);
}

/** Whether the text is exactly one reference (its default may hold others). */
function isWholeReference(text: string): boolean {
  return text.startsWith('${') && referenceAt(text, 0, {})?.end === text.length;
}

/** A `${VAR}` with no default whose variable is not set: where it is (a JSON pointer) and which variable. */
export interface UnsetReference {
  pointer: string;
  variable: string;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Expands every string in a parsed YAML value. A scalar that is exactly one reference
 * (`port: ${PORT:-8080}`) is re-read as a YAML scalar so it keeps its natural type. Each reference left empty for want of
 * its variable (and a default) is added to `unset`, with the pointer of the string that holds it.
 */
export function interpolateValue(value: unknown, env: NodeJS.ProcessEnv, unset?: UnsetReference[], pointer = ''): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const variables: string[] = [];
    const expanded = interpolate(value, env, variables);
    for (const variable of new Set(variables)) unset?.push({ pointer, variable });
    if (isWholeReference(value)) {
      if (expanded === '') return '';
      try {
        const scalar = parseYamlScalar(expanded);
        if (typeof scalar === 'number' || typeof scalar === 'boolean') return scalar;
      } catch {
        // not a scalar on its own: keep the string
      }
    }
    return expanded;
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateValue(item, env, unset, `${pointer}/${index}`));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateValue(v, env, unset, `${pointer}/${escapePointer(k)}`);
    return out;
  }
  return value;
}
