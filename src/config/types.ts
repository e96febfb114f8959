// The shapes of a loaded, validated and frozen gateway config.
import type { TemplateSet } from '../engine/liquid.js';
import type { SchemaRegistry } from './schemas.js';

export type ModelKind = 'chat' | 'evaluation' | 'image' | 'video';

export interface PriceConfig {
  currency: string;
  inputPerMillion?: number;
  outputPerMillion?: number;
  cachedInputPerMillion?: number;
  cacheWritePerMillion?: number;
  cacheWrite1hPerMillion?: number;
  audioInputPerMillion?: number;
  audioOutputPerMillion?: number;
  perRequest?: number;
  perImage?: number | Record<string, number>;
  perVideoSecond?: number;
}

export interface ModelConfig {
  id: string;
  upstream?: string;
  kind: ModelKind;
  fallback: boolean;
  enabled: boolean;
  price: PriceConfig;
  evaluation?: Record<string, unknown>;
  media?: Record<string, unknown>;
  /** What the model accepts, read by translations (schemas/model.schema.json); never sent upstream. */
  reasoning: boolean;
  outputBound?: 'max_tokens' | 'max_completion_tokens';
  thinking: boolean;
  prefill: boolean;
  /** From the vendor's model card: read by the estimate and the usage check, never sent upstream. */
  limits?: ModelLimits;
}

export interface ModelLimits {
  contextTokens: number;
  maxOutputTokens: number;
}

export interface ChannelConfig {
  id: string;
  description?: string;
  enabled: boolean;
  protocol: string;
  /** The protocol operations the vendor serves; all of the protocol's when absent. */
  operations?: string[];
  baseUrl: string;
  priority: number;
  credential?: { env: string; secretEnv?: string };
  headers?: Record<string, string>;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number; deadlineMs: number };
  pool: { connections: number; pipelining: number };
  retries: { max: number; budget: number; burst: number; minDelayMs: number; maxDelayMs: number };
  breaker: { failures: number; coolDownMs: number };
  models: ModelConfig[];
  /** Where the channel was declared, for messages. */
  file: string;
  /** Why the channel cannot serve, when it cannot (a missing credential variable). */
  disabledReason?: string;
  /** The credential read from the environment at load. */
  credentialValue?: string;
  /** The second secret (credential.secretEnv) read at load. */
  secretValue?: string;
}

export interface UsageSpec {
  /** Dot path of the raw usage in a JSON answer. */
  from?: string;
  /** SSE event name to where its usage is; `final` marks the protocol's final usage event. */
  events?: Record<string, { from: string; final: boolean }>;
  /** Liquid (JSON) from the raw usage to {inputTokens, outputTokens, cachedInputTokens}. */
  tokens: string;
}

/** Where media sit in a document, for the outputs stage (schemas/protocol.schema.json $defs/mediaItems). */
export interface MediaItems {
  list?: string;
  item?: string;
  url?: string;
  base64?: string;
  when?: Record<string, unknown>;
  purpose?: 'image_generation' | 'video_generation';
}

export interface OperationConfig {
  method: string;
  path: string;
  dialect?: string;
  encoding: 'json' | 'multipart' | 'none';
  response: 'json' | 'sse' | 'binary';
  streamFlag?: string;
  deadlineMs?: number;
  usage?: UsageSpec;
  outputs?: { answer?: MediaItems; events?: Record<string, MediaItems> };
  errors?: { message: string };
}

export interface ProtocolConfig {
  id: string;
  description?: string;
  dialect: string;
  auth?: { header: string; value: string };
  headers?: Record<string, string>;
  /** Client headers a pass-through forwards (lower-case names). */
  forwardHeaders?: string[];
  /** The encoding count_tokens uses locally for this protocol's channels. */
  tokenizer?: { encoding: string };
  operations: Record<string, OperationConfig>;
  translations?: Record<string, Record<string, unknown>>;
  evaluate?: Record<string, unknown>;
  tasks?: Record<string, unknown>;
  file: string;
}

export interface EndpointConfig {
  name: string;
  method: string[];
  path: string;
  aliases: boolean;
  scope: string | null;
  auth: 'key' | 'none' | 'optional';
  dialect: 'openai' | 'anthropic';
  requestSchema?: string;
  bodyLimit?: number;
  /** The route reads multipart/form-data bodies (the multipart parser is registered for these routes only). */
  multipart?: boolean;
  handler: string;
  options?: Record<string, unknown>;
}

/** Top-level config sections. Sections added by later capabilities appear as extra keys. */
export interface GatewayConfig {
  server: { host: string; port: number; logLevel: string; publicUrl: string; bodyLimitBytes: number; upstreamAnswerMaxBytes: number; referenceBytesInFlight: number };
  storage: {
    dataDir: string;
    database: { driver: 'sqlite' | 'postgres'; path: string; url?: string; schema?: string };
    blobs: { driver: 'local' | 's3'; path: string; endpoint?: string; region?: string; bucket?: string; accessKey?: string; secretKey?: string; useSSL?: boolean; pathStyle?: boolean };
    cache: { driver: 'memory' | 'redis'; url?: string };
  };
  channels: { dir: string; protocolsDir?: string };
  [section: string]: unknown;
}

/** A model id resolved to the channels that serve it, best first. */
export interface ModelRoute {
  model: ModelConfig;
  channel: ChannelConfig;
  protocol: ProtocolConfig;
}

export interface LoadedConfig {
  file: string;
  /** Folder the config file lives in; relative paths in it resolve from here. */
  baseDir: string;
  gateway: GatewayConfig;
  channels: ChannelConfig[];
  protocols: Map<string, ProtocolConfig>;
  /** Client model id to the routes that serve it, in the order to try. */
  models: Map<string, ModelRoute[]>;
  endpoints: EndpointConfig[];
  templates: TemplateSet;
  /** The Ajv that validated this config; request bodies are checked with it too. */
  schemas: SchemaRegistry;
  warnings: string[];
}
