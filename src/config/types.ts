// The shapes of a validated, cross-checked and routed gateway config.
import type { SchemaRegistry } from './schemas.js';

import type { PoolEntry, ResolvedCredential } from './credentials.js';
import type { RouteCachePolicy } from './cache.js';
import type { AnswerMedia, Catalogue, ChannelCredential, ChannelSchema, EventMedia, GatewayConfigSchema, McpPassthrough, McpServerSchema, ModelConfig, ProtocolSchema, RouteRoute, GuardrailGuardrail } from './generated/config-types.js';

// The shapes of the files, as validated with their defaults filled in, are generated from schemas/ (npm run gen:types).
export type {
  AnswerMedia,
  ChannelSchema,
  EvaluateSpec,
  McpServerSchema,
  EventMedia,
  FilesConfig,
  ModelConfig,
  ModelLimits,
  PriceConfig,
  PriceCount,
  ProtocolSchema,
  ProtocolTasks,
  TaskSpec,
  TranslationSchema,
  UsageSpec,
} from './generated/config-types.js';

export type ModelKind = ModelConfig['kind'];

/** Where media sit in an answer or an event (`operations.<name>.outputs`); their paths are Liquid paths (src/config/paths.ts). */
export type MediaItems = AnswerMedia | EventMedia;

/** A channel file, plus what the loader learns about it. */
export interface ChannelConfig extends Omit<ChannelSchema, 'credential'> {
  /** One credential or alternatives (the generated type cannot express the schema's if/then/else). */
  credential?: ChannelCredential | ChannelCredential[];
  /** Where the channel was declared, for messages. */
  file: string;
  /** Why the channel cannot serve, when it cannot (a missing credential variable). */
  disabledReason?: string;
  /** The credential chosen and read from the environment at load (src/config/credentials.ts); absent for a keyless channel. */
  auth?: ResolvedCredential;
  /** A key pool's entries that serve (`credentials`, read at load); absent for a channel with one `credential`. */
  keyPool?: PoolEntry[];
  /** A key pool's entries that cannot serve for want of variables: the names each lacks (for /readyz and the startup log). */
  missingKeys?: string[];
  /** Every secret value the chosen credential holds, to scrub from upstream text (tokens minted from it are added at run time). */
  secretValues?: string[];
  /** A static credential's key, read from the environment at load. */
  credentialValue?: string;
  /** A static credential's second secret (credential.secretEnv) read at load. */
  secretValue?: string;
}

export type OperationConfig = ProtocolSchema['operations'][string];

/** A protocol file, and where it was read from. */
export interface ProtocolConfig extends ProtocolSchema {
  file: string;
}

export type EndpointConfig = Catalogue[number];

/** The config file, its sections as validated. Sections a later capability adds before its schema lands read as unknown. */
export type GatewayConfig = GatewayConfigSchema & { [section: string]: unknown };

/** A model id resolved to the channels that serve it, best first. */
export interface ModelRoute {
  model: ModelConfig;
  channel: ChannelConfig;
  protocol: ProtocolConfig;
  /** The route and target this attempt came through; absent on a model's own fallback group. */
  via?: TargetVia;
}

/** One guardrail as a guardrails/ file declares it (schemas/guardrail.schema.json), defaults filled in. */
export type GuardrailSchema = GuardrailGuardrail;

/** One route as a routes/ file declares it (schemas/route.schema.json), defaults filled in. */
export type RouteSchema = RouteRoute;

/** A route's target as an attempt carries it. */
export interface TargetVia {
  /** The route whose targets list this one (the innermost one, for a route of routes): its failover and cooldown apply. */
  route: RouteNode;
  /** `channel/model`: what x-gateway-target, metrics and cooldowns name. */
  target: string;
}

/** A route built at load: its strategy, its failover predicate, and its targets as attempts. */
export interface RouteNode {
  id: string;
  file: string;
  strategy: RouteSchema['strategy'];
  stickyKey?: string;
  /** True when an attempt's failure moves the request on to the next target (`failover.on`, compiled). */
  movesOn(err: unknown): boolean;
  /** Set when a chat answer a content filter stopped goes on to the next target (`failover.on` lists content_filter). */
  contentFilter?: true;
  /** Set when a text stream broken after its first byte goes on at the next target (failover.streamAfterFirstByte). */
  streamFailover?: { idleMs: number };
  cooldown?: RouteSchema['cooldown'];
  /** The route's response cache (`cache:`), compiled; absent: nothing about caching runs for its requests. */
  cache?: RouteCachePolicy;
  targets: RouteTarget[];
  /** Every attempt the route can reach, once each, in the order the targets list them: the reservation covers the dearest. */
  reachable: ModelRoute[];
  kind: ModelKind;
}

export interface RouteTarget {
  /** The target's `model` or `route`, as written. */
  name: string;
  weight: number;
  /** Set for a target that is another route. */
  route?: RouteNode;
  /** The attempts this target stands for, best first (a model's channels by priority; a route's reachable targets). */
  attempts: ModelRoute[];
  /** Per million input plus output tokens at the cheapest of its attempts (the cost strategy's order). */
  price: number;
}

/** A config as the config layer hands it on: read, validated, cross-checked and routed. Its mappings are compiled above (src/compile). */
export interface CheckedConfig {
  file: string;
  /** Folder the config file lives in; relative paths in it resolve from here. */
  baseDir: string;
  gateway: GatewayConfig;
  channels: ChannelConfig[];
  protocols: Map<string, ProtocolConfig>;
  /** Client model id to the routes that serve it, in the order to try. */
  models: Map<string, ModelRoute[]>;
  /** Alias to the id of the model it names. */
  aliases: Map<string, string>;
  /** Routes (routes/ files) by the public model id they answer to; empty when none are configured. */
  routes: Map<string, RouteNode>;
  endpoints: EndpointConfig[];
  /** The MCP servers (mcp/*.yaml) and the grants the config file makes. */
  mcp: McpSetup;
  /** The Ajv that validated this config; request bodies are checked with it too. */
  schemas: SchemaRegistry;
  warnings: string[];
}

/** One guardrail's verdict on one stage of a call, as the request log keeps it: never the text it matched. */
export interface GuardrailVerdict {
  id: string;
  stage: 'input' | 'output' | 'stream';
  verdict: 'pass' | 'flag' | 'redact' | 'block';
  /** Matches by detector name (`email`: 2); absent when nothing matched. */
  matches?: Record<string, number>;
  /** Time the check took, in milliseconds (summed over a stream's windows). */
  ms: number;
  /** A check that calls out (moderation, http) and could not finish: past its deadline, or its call failed; the fail mode gave the verdict. */
  failed?: 'timeout' | 'error';
}

/** One upstream MCP server as the gateway runs it. */
export interface McpServerConfig extends Omit<McpServerSchema, 'credential'> {
  credential?: ChannelCredential | ChannelCredential[] | McpPassthrough;
  /** The user's own token passed through (credential.passthrough): the client's header it comes on, lower case, and how it goes on. */
  passthrough?: { from: string; header?: string; value?: string };
  /** Where it was declared, for messages. */
  file: string;
  /** Why it cannot serve (a credential variable not set), when it cannot. */
  disabledReason?: string;
  /** The credential chosen and read at load; absent for a server without one. */
  auth?: ResolvedCredential;
  /** The secret values it holds, to scrub from any text a client or a log sees. */
  secretValues: string[];
}

export interface McpGrant {
  /** A workspace's name or id, or `*`. */
  workspace: string;
  server: string;
  tools: string[];
}

/** The MCP part of a loaded config: the servers by id, and the grants the config file makes. */
export interface McpSetup {
  servers: Map<string, McpServerConfig>;
  grants: McpGrant[];
  /** How long a relay token (a Responses upstream calling a gateway server back) stays valid, in seconds. */
  relayTokenSeconds: number;
}
