// Expands ${VAR} and ${VAR:-default} in config scalars from the environment.
import { parse as parseYamlScalar } from 'yaml';

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const whole = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;

export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(reference, (_m, name: string, fallback: string | undefined) => {
    const value = env[name];
    return value !== undefined && value !== '' ? value : (fallback ?? '');
  });
}

/**
 * Expands every string in a parsed YAML value. A scalar that is exactly one reference
 * (`port: ${PORT:-8080}`) is re-read as a YAML scalar so it keeps its natural type.
 */
export function interpolateValue(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const expanded = interpolate(value, env);
    if (whole.test(value)) {
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
