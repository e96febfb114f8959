// A channel's credentials as data: the kinds (schemas/channel.schema.json `$defs/credential`), the fields each kind takes,
// and the route stage's choice among a channel's alternatives, read from the environment (and a key file) at load.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChannelCredential } from './generated/config-types.js';

export type CredentialKind = NonNullable<ChannelCredential['kind']>;

/** The fields each kind takes besides `kind` and `requiresEnv`; a field of another kind is a config error. */
const fieldsOf: Record<CredentialKind, readonly (keyof ChannelCredential)[]> = {
  static: ['env', 'secretEnv', 'header', 'value'],
  'oauth2-client-credentials': ['tokenUrl', 'clientIdEnv', 'clientSecretEnv', 'scope', 'header', 'value'],
  'google-service-account': ['keyFileEnv', 'scope', 'header', 'value'],
  'aws-sigv4': ['service', 'regionEnv', 'accessKeyIdEnv', 'secretAccessKeyEnv', 'sessionTokenEnv'],
};

/** The header a token kind sets when its credential names none, and its value around the token. */
export const TOKEN_HEADER = 'authorization';

/** A credential as the engine uses it: the kind's settings with the environment's values read in. Never logged or shown. */
export type ResolvedCredential =
  | { kind: 'static'; credential: string; secret?: string; header?: string; value?: string }
  | { kind: 'oauth2-client-credentials'; tokenUrl: string; clientId: string; clientSecret: string; scope: string; header: string; value?: string }
  | { kind: 'google-service-account'; clientEmail: string; privateKey: KeyObject; privateKeyId?: string; tokenUri: string; scope: string; header: string; value?: string }
  | { kind: 'aws-sigv4'; service: string; region: string; accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** A channel's credentials as a list of alternatives (one credential is a list of one). */
export function credentialsOf(credential: ChannelCredential | ChannelCredential[] | undefined): ChannelCredential[] {
  if (!credential) return [];
  return Array.isArray(credential) ? credential : [credential];
}

/** Fields only an entry of a key pool (`credentials`) takes. */
const poolFields = ['weight', 'baseUrl'] as const;

/** Reports each field a credential has that its kind does not take, or that only a key pool's entry takes (pointer relative to the credential). */
export function foreignCredentialFields(credential: ChannelCredential, inPool = false): string[] {
  const kind = credential.kind ?? 'static';
  const allowed = new Set<string>(['kind', 'requiresEnv', ...fieldsOf[kind], ...(inPool ? poolFields : [])]);
  return Object.keys(credential).filter((field) => !allowed.has(field));
}

/** The variables a credential reads, required ones first; the optional session token is not among them. */
function requiredVariables(credential: ChannelCredential): string[] {
  const named = [credential.env, credential.secretEnv, credential.clientIdEnv, credential.clientSecretEnv, credential.keyFileEnv, credential.regionEnv, credential.accessKeyIdEnv, credential.secretAccessKeyEnv];
  return [...(credential.requiresEnv ?? []), ...named.filter((name): name is string => !!name)];
}

/** The variable that names a credential for people (its key's, its client id's, its key file's): never a secret's value. */
const identifyingVariable = (credential: ChannelCredential) => credential.env ?? credential.clientIdEnv ?? credential.keyFileEnv ?? credential.accessKeyIdEnv;

/** A choice that failed says why; `missing` names the unset variables when that is why (for the one-line summary). */
export type CredentialChoice = { resolved: ResolvedCredential } | { problem: string; missing?: string };

/**
 * The first alternative whose variables are all set, its values read in; else what is missing (one credential: its
 * first unset variable; alternatives: what each lacks), or why a set key file cannot serve. Messages name variables and
 * files, never values.
 */
export function chooseCredential(alternatives: ChannelCredential[], env: NodeJS.ProcessEnv): CredentialChoice {
  const unset = alternatives.map((credential) => requiredVariables(credential).filter((name) => !env[name]));
  const index = unset.findIndex((names) => names.length === 0);
  if (index >= 0) return resolve(alternatives[index], env);
  if (alternatives.length === 1) return { problem: `environment variable ${unset[0][0]} is not set`, missing: unset[0][0] };
  const missing = unset.map((names) => names.join(', ')).join('; or ');
  return { problem: `none of its credentials has its variables set (set ${missing})`, missing };
}

/** One entry of a key pool as the engine uses it: its credential read in, its share, and where its requests go. */
export interface PoolEntry {
  /** What logs, /readyz and /metrics call the entry: the variable it is named by (its key's), never a value. */
  label: string;
  weight: number;
  /** Its own base URL, instead of the channel's. */
  baseUrl?: string;
  auth: ResolvedCredential;
}

/** A key pool read from the environment: the entries that serve, and the names of the variables each other entry lacks. */
export interface PoolChoice {
  entries: PoolEntry[];
  /** One item per entry that cannot serve for want of variables: their names, comma-separated. */
  missing: string[];
  /** Why an entry whose variables are set cannot serve (a key file that cannot be read), one line each. */
  problems: string[];
}

/** Every entry of a key pool whose variables are all set, read in; the others named by what they lack. */
export function choosePool(entries: ChannelCredential[], env: NodeJS.ProcessEnv): PoolChoice {
  const chosen: PoolChoice = { entries: [], missing: [], problems: [] };
  const labels = new Set<string>();
  entries.forEach((credential, index) => {
    const unset = requiredVariables(credential).filter((name) => !env[name]);
    if (unset.length) return void chosen.missing.push(unset.join(', '));
    const choice = resolve(credential, env);
    if ('problem' in choice) return void chosen.problems.push(`credentials/${index}: ${choice.problem}`);
    // Two entries named by one variable (one key file at two scopes, say) are told apart by their place.
    let label = identifyingVariable(credential) ?? String(index);
    if (labels.has(label)) label = `${label}#${index}`;
    labels.add(label);
    chosen.entries.push({ label, weight: credential.weight ?? 1, baseUrl: credential.baseUrl, auth: choice.resolved });
  });
  return chosen;
}

function resolve(credential: ChannelCredential, env: NodeJS.ProcessEnv): CredentialChoice {
  const read = (name: string | undefined) => (name ? env[name] : undefined) ?? '';
  switch (credential.kind ?? 'static') {
    case 'static':
      return { resolved: { kind: 'static', credential: read(credential.env), secret: credential.secretEnv ? read(credential.secretEnv) : undefined, header: credential.header?.toLowerCase(), value: credential.value } };
    case 'oauth2-client-credentials':
      return {
        resolved: { kind: 'oauth2-client-credentials', tokenUrl: withoutDoubledSlashes(credential.tokenUrl!), clientId: read(credential.clientIdEnv), clientSecret: read(credential.clientSecretEnv), scope: credential.scope!, header: (credential.header ?? TOKEN_HEADER).toLowerCase(), value: credential.value },
      };
    case 'google-service-account':
      return serviceAccount(credential, read(credential.keyFileEnv));
    case 'aws-sigv4':
      return {
        resolved: { kind: 'aws-sigv4', service: credential.service!, region: read(credential.regionEnv), accessKeyId: read(credential.accessKeyIdEnv), secretAccessKey: read(credential.secretAccessKeyEnv), sessionToken: read(credential.sessionTokenEnv) || undefined },
      };
  }
}

/** A URL built from variables (`${AUTHORITY}/${TENANT}/...`, the authority ending in a slash) with each doubled slash of its path made one. */
function withoutDoubledSlashes(text: string): string {
  const url = new URL(text);
  url.pathname = url.pathname.replace(/\/{2,}/g, '/');
  return url.href;
}

/** The fields of a Google service-account key file the JWT-bearer grant needs (https://google.aip.dev/auth/4112). */
interface ServiceAccountKey {
  type?: unknown;
  client_email?: unknown;
  private_key?: unknown;
  private_key_id?: unknown;
  token_uri?: unknown;
}

/** Reads and checks a service-account key file; a problem names the variable and the file, never its contents. */
function serviceAccount(credential: ChannelCredential, path: string): CredentialChoice {
  const named = `the service-account key file ${credential.keyFileEnv} names (${path})`;
  let key: ServiceAccountKey;
  try {
    key = JSON.parse(readFileSync(path, 'utf8')) as ServiceAccountKey;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code ? `${named} cannot be read (${code})` : `${named} is not JSON` };
  }
  if (key === null || typeof key !== 'object' || key.type !== 'service_account') return { problem: `${named} is not a service-account key (its "type" is not "service_account")` };
  for (const field of ['client_email', 'private_key', 'token_uri'] as const) {
    if (typeof key[field] !== 'string' || !key[field]) return { problem: `${named} has no "${field}"` };
  }
  if (!URL.canParse(key.token_uri as string) || !/^https?:$/.test(new URL(key.token_uri as string).protocol)) return { problem: `${named} has a "token_uri" that is not an http(s) URL` };
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key.private_key as string);
  } catch {
    return { problem: `${named} has a "private_key" that is not a PEM private key` };
  }
  if (privateKey.asymmetricKeyType !== 'rsa') return { problem: `${named} has a "private_key" that is not an RSA key (RS256 needs one)` };
  return {
    resolved: {
      kind: 'google-service-account',
      clientEmail: key.client_email as string,
      privateKey,
      privateKeyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined,
      tokenUri: key.token_uri as string,
      scope: credential.scope!,
      header: (credential.header ?? TOKEN_HEADER).toLowerCase(),
      value: credential.value,
    },
  };
}

/** The secret values of a resolved credential, to scrub from any upstream text a client or a log may see. */
export function secretValuesOf(credential: ResolvedCredential | undefined): string[] {
  if (!credential) return [];
  switch (credential.kind) {
    case 'static':
      return [credential.credential, credential.secret ?? ''].filter(Boolean);
    case 'oauth2-client-credentials':
      return [credential.clientSecret];
    case 'google-service-account':
      return [];
    case 'aws-sigv4':
      return [credential.secretAccessKey, credential.sessionToken ?? ''].filter(Boolean);
  }
}
