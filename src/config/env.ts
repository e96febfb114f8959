// Expands ${VAR} and ${VAR:-default} in config scalars from the environment.
import { parse as parseYamlScalar } from 'yaml';

const name = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * One `${VAR}` or `${VAR:-default}` at `start` (where `${` is), the default itself expanded, so a default may hold
 * references of its own (`${ENDPOINT:-https://${REGION}.example.com}`); undefined when the text there is not one.
 */
function referenceAt(text: string, start: number, env: NodeJS.ProcessEnv): { value: string; end: number } | undefined {
  const variable = name.exec(text.slice(start + 2))?.[0];
  if (!variable) return undefined;
  let at = start + 2 + variable.length;
  let fallback: string | undefined;
  if (text.startsWith(':-', at)) {
    // The default runs to the brace that closes this reference: nested `${...}` are expanded, not ended on.
    let depth = 0;
    let end = at + 2;
    for (; end < text.length; end++) {
      if (text.startsWith('${', end)) depth++;
      else if (text[end] === '}' && depth-- === 0) break;
    }
    if (end >= text.length) return undefined;
    fallback = interpolate(text.slice(at + 2, end), env);
    at = end;
  }
  if (text[at] !== '}') return undefined;
  const value = env[variable];
  return { value: value !== undefined && value !== '' ? value : (fallback ?? ''), end: at + 1 };
}

export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf('${'); at >= 0; at = text.indexOf('${', at + 1)) {
    if (at < from) continue;
    const reference = referenceAt(text, at, env);
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

/**
 * Expands every string in a parsed YAML value. A scalar that is exactly one reference
 * (`port: ${PORT:-8080}`) is re-read as a YAML scalar so it keeps its natural type.
 */
export function interpolateValue(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const expanded = interpolate(value, env);
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
  if (Array.isArray(value)) return value.map((item) => interpolateValue(item, env));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateValue(v, env);
    return out;
  }
  return value;
}
