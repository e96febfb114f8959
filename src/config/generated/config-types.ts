// Generated from schemas/ by `npm run gen:types` (src/cli/config-types.ts); do not edit. A test fails when it is stale.

/**
 * Routes the gateway serves. Every path answers under both /v1/... and /api/v1/...
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "catalogue".
 */
export type Catalogue = {
  name: string;
  /**
   * @minItems 1
   */
  method: ('GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD' | 'PATCH')[];
  path: string;
  /**
   * Also serve /api<path> for /v1 paths.
   */
  aliases: boolean;
  /**
   * Scope a key needs; null: any valid key.
   */
  scope: string | null;
  /**
   * optional: the handler accepts another credential (a signed token).
   */
  auth: 'key' | 'none' | 'optional';
  /**
   * The error envelope the route answers in (the client SDK's own): OpenAI's `{"error": {...}}` or Anthropic's `{"type": "error", "error": {...}}`.
   */
  envelope: 'openai' | 'anthropic';
  /**
   * Id of a schema in schemas/requests/ the JSON body must match.
   */
  requestSchema?: string;
  /**
   * Largest request body in bytes (default: server.bodyLimitBytes). Every JSON route sets its own.
   */
  bodyLimit?: number;
  /**
   * The route reads multipart/form-data bodies. Only these routes carry the multipart parser and its per-request hooks.
   */
  multipart: boolean;
  /**
   * The endpoint's handler: a module named in src/endpoints/handlers.ts (src/endpoints/<handler>.ts) that answers the route. `pipeline`: a billed upstream call, run by the pipeline in the flow the entry's `pipeline` section names (every billed route takes this one way in).
   */
  handler: string;
  /**
   * Passed to the handler factory.
   */
  options?: {
    [k: string]: unknown;
  };
  /**
   * The kind of model this endpoint serves (a model's `kind` in a channel file). Declaring it makes the kind known: models of it are listed by GET /v1/models to keys holding this entry's scope, and a model sent to the wrong endpoint is pointed here.
   */
  modelKind?: string;
  /**
   * The guardrail kind whose checks call models of this entry's `modelKind` through this entry, in its wire shape (docs/guardrails.md): the moderations entry declares `moderation`, so a moderation guardrail must name a model of that kind, and check-config refuses any other.
   */
  guardrailKind?: string;
  /**
   * The error code a request gets when it names a model of this entry's `modelKind` on an endpoint of another kind (default `wrong_model_kind`; the first entry of the kind that declares one wins). The evaluate entry declares `evaluation_model_not_supported`, the code SPEC.md gives an evaluation model sent to chat.
   */
  wrongKindCode?: string;
  /**
   * The OpenTelemetry GenAI `gen_ai.operation.name` of calls to models of this entry's `modelKind` (`chat`, `embeddings`, `generate_content`, ...: https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/); default the kind itself. The first entry of the kind that declares one wins.
   */
  genAiOperation?: string;
  /**
   * For `handler: pipeline`: how the pipeline runs the call (docs/endpoints.md): the flow, the client's wire dialect, the operation, and what the flow reads of the entry. It names a flow (or, deprecated, names it in `dialect`); every flow but `task` names an operation, `task` its `task` section (check-config says which is missing).
   */
  pipeline?: {
    /**
     * The flow by name (src/flows/index.ts): what differs between families of billed calls. `chat` (chat, Messages, Responses: passed through or translated by protocol pair), `images`, `evaluate`, `relay` (any other family: the request passed through with only `model` mapped, the answer relayed with its cost), `task` (an asynchronous task: answered at once, submitted, polled and archived by the task runner, as `task` declares).
     */
    flow?: string;
    /**
     * The wire dialect the client speaks (a protocol's `dialect`: `openai-chat`, `anthropic-messages`, `openai-responses`, `openai-images`): a protocol of the same dialect is passed through, any other is translated by the pair's mapping. Default: the flow's name. Deprecated: naming the flow here with no `flow` (`dialect: relay`); check-config warns and reads it as the flow.
     */
    dialect?: string;
    /**
     * The protocol operation the call is sent to (a route's channel must serve it). Its `usage` mapping says how usage is read; the model's price units say what it costs.
     */
    operation?: string;
    /**
     * relay: what the upstream answers. `json`: a JSON object, relayed with `cost` added. `text`: text relayed as it came, cost in an `x-cost` header. `binary`: bytes streamed to the client as they arrive (never buffered), cost in an `x-cost` header.
     */
    answer: 'json' | 'text' | 'binary';
    /**
     * relay, `answer: json`: the answer is text instead (cost in `x-cost`) when the request's `field` is one of `values` (a transcription's `response_format: text`).
     */
    textWhen?: {
      field: string;
      /**
       * @minItems 1
       */
      values: string[];
    };
    /**
     * relay: the answer's text is the client's input, told after the fact (a transcript of its audio). The input guardrails of the route or model check the answer's text instead of the request: `block` refuses the answer with 400 `guardrail_blocked` (the call charged what the upstream did), `redact` sends the client the redacted text, `flag` records the verdict (docs/guardrails.md).
     */
    answerIsInput?: boolean;
    /**
     * relay: the request field whose characters a `perMillionCharacters` price counts (speech: `input`).
     */
    charactersOf?: string;
    /**
     * relay, multipart: the form's file fields (sent on with their file names); every other part is a text field checked against requestSchema.
     *
     * @minItems 1
     */
    files?: string[];
    /**
     * relay, multipart: the most bytes a form may carry, files and fields together (default: 25 MiB).
     */
    maxRequestBytes?: number;
    /**
     * relay: how a `perThousandSearches` estimate counts search units (Cohere's rule): one unit per `documentsPerSearch` documents, a document whose bytes with the query's pass `tokensPerDocument` counting once per started `tokensPerDocument` (each byte taken as a token, so the estimate errs high).
     */
    searches?: {
      /**
       * The request field holding the query.
       */
      query: string;
      /**
       * The request field holding the list of documents.
       */
      documents: string;
      documentsPerSearch: number;
      tokensPerDocument: number;
    };
    /**
     * relay, multipart: the file field holding audio whose duration the gateway measures (music-metadata): a `perMinute` model is reserved and, when the answer reports no `seconds`, charged by it. An upload whose duration cannot be read is reserved the model's `media.maxAudioSeconds`.
     */
    durationOf?: string;
    /**
     * flow `task`: the task family, as data (docs/endpoints.md, "A task family"). The protocol's task of the entry's modelKind runs it (schemas/protocol-tasks.schema.json).
     */
    task?: {
      /**
       * The wire object a task of this family answers as (`video.task`); its webhook events are `<name>.completed` and `<name>.failed` (the object without `.task`).
       */
      object: string;
      /**
       * Task ids of this family read `<idPrefix>_<28 hex digits>` (`video_...`).
       */
      idPrefix: string;
      /**
       * The file purpose its archived results are stored under (`video_generation`).
       */
      purpose: string;
      /**
       * `own`: served at `path`, by the protocol task of the kind that declares no `route`. `declared`: not served at `path` (which then only describes the shape), but at every route a protocol's task of this kind declares (`tasks.<name>.route`, e.g. /v1/bfl/text_to_image), each with this entry's scope and limits; its tasks are read at GET /v1/tasks/{id}.
       */
      routes: 'own' | 'declared';
      /**
       * What a task is billed by: the count of `unit` its result's usage mapping reports (`usage: { seconds: ... }`) at the model's price for one, plus any perRequest; a result reporting `tokens` is priced at outputPerMillion instead. Reserved for the task's whole lifetime.
       */
      bill: {
        /**
         * The name the result's usage mapping reports the billed count under (`seconds`, `images`).
         */
        unit: string;
        /**
         * The model's price field for one unit: a number (`perVideoSecond`), a map by size and quality priced as `perImage` is (the size asked for, else the priciest), or `units` (the model's own `price.units.<unit>`: each, per thousand or per million). A model with no such price and no outputPerMillion is reserved and charged its perRequest alone.
         */
        price: string;
        /**
         * How many units a task reserves: a constant, or the request's `field`, else the model's `limit`, else `default` (at least 1). The same without `field` is the most a result may report: more is impossible, charged the reservation and logged.
         */
        reserve:
          | number
          | {
              /**
               * The request field whose number is reserved (`seconds`); more than the most (below) is refused with 400.
               */
              field?: string;
              /**
               * Else the model's declared limit of that name (media or limits: `maxSeconds`).
               */
              limit?: string;
              /**
               * Else this many.
               */
              default?: number;
            };
      };
    };
  };
}[];
/**
 * One way of authenticating requests to the channel (docs/config.md, "Credentials"). Every field that names a variable reads it from the environment at load; a credential whose variables are not all set is not used. Fields of another kind than `kind` are refused.
 *
 * This interface was referenced by `ChannelSchema`'s JSON-Schema
 * via the `definition` "credential".
 */
export type ChannelCredential = {
  /**
   * Default `static`. `static`: a key sent in a header (the protocol's `auth`, or this credential's `header` and `value`). `oauth2-client-credentials`: an access token from an OAuth 2 token endpoint (client id and secret, RFC 6749 section 4.4; Microsoft Entra ID). `google-service-account`: an access token for a service-account key file (a JWT-bearer assertion signed RS256, RFC 7523). `aws-sigv4`: each request signed with AWS Signature Version 4 over the bytes sent. Tokens are cached per credential and refreshed before they expire, once for all requests waiting on them.
   */
  kind?: 'static' | 'oauth2-client-credentials' | 'google-service-account' | 'aws-sigv4';
  /**
   * static: the variable holding the key (`credential` in the header templates).
   */
  env?: string;
  /**
   * static: a variable holding a second secret, for providers that sign a token per request (`secret` in the auth template, e.g. `{{ credential | jwt_hs256: secret, 1800 }}`).
   */
  secretEnv?: string;
  /**
   * The header the credential goes in, instead of the protocol's `auth` header (static), or `authorization` (token kinds). Not for aws-sigv4, which sets `authorization` itself.
   */
  header?: string;
  /**
   * The header's value (Liquid): `credential` and `secret` in scope for static (default: the protocol's `auth.value`), `token` for the token kinds (default `Bearer {{ token }}`).
   */
  value?: string;
  /**
   * oauth2-client-credentials: the token endpoint (`${VAR}` references are read from the environment when the file loads; list them in `requiresEnv`).
   */
  tokenUrl?: string;
  /**
   * oauth2-client-credentials: the variable holding the client id.
   */
  clientIdEnv?: string;
  /**
   * oauth2-client-credentials: the variable holding the client secret.
   */
  clientSecretEnv?: string;
  /**
   * oauth2-client-credentials and google-service-account: the scope the token is asked for (space-separated when several).
   */
  scope?: string;
  /**
   * google-service-account: the variable holding the path of the service account's JSON key file (read at load; its `token_uri` is where the assertion goes).
   */
  keyFileEnv?: string;
  /**
   * aws-sigv4: the signing name of the service (`bedrock` for Bedrock's runtime).
   */
  service?: string;
  /**
   * aws-sigv4: the variable holding the region (`AWS_REGION`).
   */
  regionEnv?: string;
  /**
   * aws-sigv4: the variable holding the access key id (`AWS_ACCESS_KEY_ID`).
   */
  accessKeyIdEnv?: string;
  /**
   * aws-sigv4: the variable holding the secret access key (`AWS_SECRET_ACCESS_KEY`).
   */
  secretAccessKeyEnv?: string;
  /**
   * aws-sigv4: the variable holding a session token of temporary credentials (`AWS_SESSION_TOKEN`); optional: when it is set, it is sent in `x-amz-security-token` and signed.
   */
  sessionTokenEnv?: string;
  /**
   * Variables this credential needs besides the ones its fields name (one a `tokenUrl` reads, say).
   */
  requiresEnv?: string[];
  /**
   * Key pools (`credentials`) only: this entry's share of the requests, relative to the others' (default 1).
   */
  weight?: number;
  /**
   * Key pools (`credentials`) only: where this entry's requests go instead of the channel's `baseUrl` (an Azure OpenAI resource of another region, with its own key).
   */
  baseUrl?: string;
};
/**
 * A count of units: one of these shapes.
 *
 * This interface was referenced by `PriceConfig`'s JSON-Schema
 * via the `definition` "count".
 */
export type PriceCount =
  | number
  | {
      /**
       * A request field: the number of items its list holds (a value that is not a list counts 1, none 0), or of the form's files of that name.
       */
      countOf: string;
    }
  | {
      /**
       * A number the model declares in `media` or `limits` (e.g. `media.maxPages`: `limit: maxPages`); check-config refuses a model that does not declare it.
       */
      limit: string;
    };
/**
 * How a protocol answers typed evaluation. `native`: the upstream evaluates every question itself (a System-One-style API); `request` and `response` map the body each way. `logprobs`: an OpenAI-compatible chat model gets one prompt per question and its first-token logprobs are read as label probabilities.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "protocol-evaluate".
 */
export type EvaluateSpec = ProtocolEvaluate;

/**
 * The config file: one section per schemas/config/*.json.
 */
export interface GatewayConfigSchema {
  admin: AdminConfig;
  billing: BillingConfig;
  cache: CacheConfig;
  channels: ChannelsConfig;
  dashboard: DashboardConfig;
  endpoints: EndpointsConfig;
  evaluate: EvaluateConfig;
  files: FilesConfig;
  guardrails: GuardrailsConfig;
  mcp: McpConfig;
  metrics: MetricsConfig;
  network: NetworkConfig;
  overlay: OverlayConfig;
  'rate-limits': RateLimitsConfig;
  requestLogs: RequestLogsConfig;
  routes: RoutesConfig;
  server: ServerConfig;
  storage: StorageConfig;
  tasks: TasksConfig;
  telemetry: TelemetryConfig;
  webhooks: WebhooksConfig;
}
/**
 * The admin API (/admin/v1): who may call it besides a workspace owner's dashboard session. Tokens are kept as their SHA-256 only, like API keys; `npm run admin -- admin-token create --id NAME` makes a token and prints the entry to add here. The API's endpoints (workspaces, keys, caps on one model, users, usage, audit, reload) are documented in its OpenAPI document at /admin/v1/openapi.json and in the README.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/admin".
 */
export interface AdminConfig {
  /**
   * Admin tokens. Each reaches every workspace and may create workspaces and reload the config; its id names the actor in the audit log. Empty: only owners' dashboard sessions reach the admin API.
   *
   * @maxItems 64
   */
  tokens: {
    /**
     * The token's name, shown as the actor of the changes it makes.
     */
    id: string;
    /**
     * Lower-case hex SHA-256 of the token; the token itself is never in the config.
     */
    sha256: string;
  }[];
}
/**
 * Spending caps: how long a reservation holds budget for a request in flight, how often expired ones are swept, and the time zone budget periods follow.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/billing".
 */
export interface BillingConfig {
  /**
   * A reservation nobody settled (the process died mid-request) stops counting against caps after this long. Keep it above the longest request, streams included. Those of a gateway process known to be gone are released sooner: by the next gateway to start on the same machine, or by any replica once the dead process's heartbeat (30 s) has run out.
   */
  reservationTtlSeconds: number;
  /**
   * Embedded (SQLite) store: how long settled charges wait to be written together in one commit, off the response path. Until their commit lands, their reservations keep holding the budget, so caps stay exact; a read of the ledger by this process commits first. 0 writes each turn of the event loop. A hard crash loses the charges of at most this window.
   */
  settleBatchMs: number;
  /**
   * How often expired reservations are deleted.
   */
  sweepIntervalSeconds: number;
  /**
   * IANA time zone (e.g. "Europe/Berlin") whose calendar daily, weekly (from Monday) and monthly budgets follow: they reset at its midnight. The admin API (`spent_in_period`, `period_resets_at` on keys, workspaces and model caps), the CLI and the dashboard show spend in the current period of this calendar. Read at start; a change needs a restart.
   */
  timeZone: string;
  /**
   * Limits assumed for a model that declares no `limits` (channel model field), never sent upstream. The estimate reserves with them; and they bound the usage such a model may report (chat, Messages, Responses, images, evaluate, the relayed families): input and output together past max(contextTokens, the request's bytes) + max(maxOutputTokens, the client's output bound), per choice or image asked for, is impossible, answered 502 upstream_malformed, charged the reservation and logged, never booked. Declare a model's real `limits` when its window is larger.
   */
  defaultLimits: {
    /**
     * Input reserved for a request that references input the gateway cannot measure; with maxOutputTokens, the usage bound of a model without limits (at least the request's bytes).
     */
    contextTokens: number;
    /**
     * Output reserved per choice when the client sets no output bound; part of the usage bound of a model without limits (at least the client's output bound).
     */
    maxOutputTokens: number;
  };
}
/**
 * The response cache's store and bounds (docs/caching.md). Nothing is cached unless a route says `cache:` (routes/*.yaml).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/cache".
 */
export interface CacheConfig {
  /**
   * `memory`: each process keeps its own, least recently used out past `maxBytes`. `redis`: one store shared by every worker and replica (`url`).
   */
  store: 'memory' | 'redis';
  /**
   * The Redis URL for `store: redis`; storage.cache.url when absent, else redis://127.0.0.1:6379.
   */
  url?: string;
  /**
   * The most bytes of answers the memory store holds (keys and answers counted); least recently used out first.
   */
  maxBytes: number;
  /**
   * The most bytes one workspace's answers hold in the memory store (at most maxBytes); past it, that workspace's own least recently used go first, so no workspace evicts every other's. Absent: half of maxBytes.
   */
  maxWorkspaceBytes?: number;
  /**
   * The memory store, once full (or a workspace's share of it): `second-miss` stores a request's answer only when the request missed before (its first miss is remembered as one bit, TinyLFU's doorkeeper), so requests asked once do not evict answers asked again, and a store of one-off requests stops paying to store and evict them; `always` stores every miss's answer, least recently used out. A store with room stores every answer either way; `Cache-Control: no-cache` is always stored; Redis stores every answer (its own eviction applies).
   */
  admission: 'second-miss' | 'always';
  /**
   * The largest answer kept; a larger one is answered and not stored.
   */
  maxEntryBytes: number;
  /**
   * No answer is kept longer, whatever a route's ttlSeconds says.
   */
  maxTtlSeconds: number;
  /**
   * How long a request waits for the store: a read past it is a miss, a write past it is dropped; never an error.
   */
  timeoutMs: number;
  /**
   * False: each workspace has its own entries (never shared). True: one workspace's answer may serve another's identical request.
   */
  sharedAcrossWorkspaces: boolean;
  /**
   * Prefix of the store's keys (a Redis shared with other uses).
   */
  namespace: string;
}
/**
 * Where channel and protocol files are found, and what requests for a retired model get.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/channels".
 */
export interface ChannelsConfig {
  /**
   * Folder of channel YAML files; protocols are read from its protocols/ subfolder. A relative path resolves against the folder of the config file, not the working directory.
   */
  dir: string;
  /**
   * Folder of protocol YAML files (default: <dir>/protocols). A relative path resolves against the folder of the config file.
   */
  protocolsDir?: string;
  /**
   * What a request for a model past its `retiresAt` gets: `refuse`, a 404 (`model_not_found`; Anthropic's `not_found_error` on Messages routes) whose message names the model's `replacement`; `replace`, the replacement serves it (the answer still echoes the id sent, the `deprecation` and `sunset` headers say why, and usage is recorded and priced as the replacement). A retired model without a replacement is refused either way.
   */
  retiredModels: 'refuse' | 'replace';
}
/**
 * How people sign in to the dashboard (/dashboard): by password, by single sign-on with an OpenID Connect provider, or both.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/dashboard".
 */
export interface DashboardConfig {
  /**
   * Offer email and password sign-in. false: only single sign-on (sso must be set); the password form is gone and a posted password is refused.
   */
  passwordSignIn: boolean;
  /**
   * Single sign-on with OpenID Connect (authorization code flow with PKCE, through openid-client). Register the gateway at the provider with the redirect URI <server.publicUrl>/dashboard/sso/callback.
   */
  sso?: {
    /**
     * The provider's issuer URL; its /.well-known/openid-configuration is read at the first sign-in.
     */
    issuer: string;
    clientId: string;
    /**
     * Use ${OIDC_CLIENT_SECRET} to keep it out of the file.
     */
    clientSecret: string;
    /**
     * The sign-in button's text.
     */
    label: string;
    /**
     * Scopes asked for; openid and email are needed.
     */
    scopes: string[];
    /**
     * Let the issuer be plain http (a provider on loopback in tests). Never in production.
     */
    allowHttp: boolean;
    /**
     * Who may sign in, and as what. A rule matches when every condition it sets holds; each matching rule gives the user its role in its workspace (the role is set again at every sign-in). A user no rule matches is refused. The provider must report the email as verified.
     *
     * @minItems 1
     * @maxItems 100
     */
    rules: {
      /**
       * The email's domain, e.g. example.com (case-insensitive, exact: sub.example.com does not match).
       */
      emailDomain?: string;
      /**
       * An ID token (or userinfo) claim that must equal value, or contain it when the claim is a list (e.g. groups).
       */
      claim?: {
        name: string;
        value: string;
      };
      /**
       * Workspace name (it must exist).
       */
      workspace: string;
      role: 'owner' | 'admin' | 'member';
    }[];
  };
}
/**
 * Endpoint families an operator adds beside the shipped catalogue (catalogue/*.yaml): YAML entries and the JSON Schemas of their requests, no code (docs/endpoints.md).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/endpoints".
 */
export interface EndpointsConfig {
  /**
   * Folder of extra catalogue YAML files, each a list of entries as in catalogue/*.yaml, read after the shipped ones (a name or a path and method already served is an error). A relative path resolves against the folder of the config file.
   */
  catalogueDir?: string;
  /**
   * Folder of extra JSON Schemas (`*.json`, each with an `$id` such as `requests/completions`) that an entry's `requestSchema` may name. An `$id` the gateway already has is an error. A relative path resolves against the folder of the config file.
   */
  schemasDir?: string;
}
/**
 * Typed evaluation (POST /api/v1/evaluate).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/evaluate".
 */
export interface EvaluateConfig {
  /**
   * Most questions one request may ask.
   */
  maxQuestions: number;
}
/**
 * The workspace file store: upload limit, lifetime, expiry sweeper and signed content URLs. Where bytes live is storage.blobs.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/files".
 */
export interface FilesConfig {
  /**
   * Largest accepted upload, exact (25 MiB); one byte more is 413.
   */
  maxUploadBytes: number;
  /**
   * Uploaded and generated files expire this many days after creation.
   */
  ttlDays: number;
  /**
   * Purposes a client may upload with (`batch`: a JSONL input of /v1/batches, the one purpose that takes JSON lines).
   *
   * @minItems 1
   */
  uploadPurposes: string[];
  sweep: {
    /**
     * How often expired files are removed.
     */
    intervalSeconds: number;
    batchSize: number;
    /**
     * Bytes with no row are removed once they are at least this old (so an upload between its bytes and its row is never touched).
     */
    orphanGraceSeconds: number;
  };
  signing: {
    /**
     * How long a signed content URL is valid.
     */
    urlLifetimeSeconds: number;
    /**
     * How long a retired key still verifies tokens after its retiredAt.
     */
    graceSeconds: number;
    /**
     * Signing keys. The first key without retiredAt signs; every listed key verifies (a retired one only until retiredAt + graceSeconds). Empty: a generated secret kept in the database.
     */
    keys: {
      id: string;
      /**
       * At least 32 characters; use ${ENV_VAR} to keep it out of the file.
       */
      secret: string;
      /**
       * When this key stopped signing.
       */
      retiredAt?: string;
    }[];
  };
}
/**
 * Where guardrail files are found (docs/guardrails.md): each a named check (pattern, moderation, http, schema, limits) with an action (block, redact, flag), attached to routes, models, workspaces and keys.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/guardrails".
 */
export interface GuardrailsConfig {
  /**
   * Folder of guardrail YAML files (one guardrail, or a list of them, a file). A relative path resolves against the folder of the config file. A folder that does not exist holds no guardrails.
   */
  dir: string;
  /**
   * A streamed answer checked by a `stream` guardrail: how many characters of its text are held back as the window a match may span before they go out. A redacted span the window has not closed yet is held until it closes, up to 16 times this.
   */
  streamHoldChars: number;
}
/**
 * The MCP gateway (docs/mcp.md): upstream MCP servers, one file each under `dir`, served at /mcp and /mcp/{server} to keys with the `mcp.tools` scope and a grant.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/mcp".
 */
export interface McpConfig {
  /**
   * Folder of the MCP server files (mcp/*.yaml), relative to the config file.
   */
  dir: string;
  /**
   * Whether a server file may name a local `command` (stdio). Off, such a file is a config error.
   */
  allowCommands: boolean;
  /**
   * How long the token lasts that a Responses upstream is given to call a gateway MCP server back with, when a Responses request's `mcp` tool names one (docs/mcp.md): long enough for the response to finish.
   */
  relayTokenSeconds: number;
  /**
   * Which workspaces may use which tools, besides the grants made through the admin API. A key sees and calls the tools its workspace is granted (and, when the key has grants of its own, only those among them).
   */
  grants: {
    /**
     * A workspace's name or id, or `*` for every workspace.
     */
    workspace: string;
    /**
     * The id of an MCP server file.
     */
    server: string;
    /**
     * Tool names, or patterns with `*`.
     */
    tools: string[];
  }[];
}
/**
 * Prometheus metrics (GET /metrics) carry per-model token and cost totals, so they are never open to the world: require a bearer token, serve them on a separate address, or both. With neither, /metrics is not served.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/metrics".
 */
export interface MetricsConfig {
  /**
   * Bearer token that GET /metrics on the main address requires (`Authorization: Bearer <token>`), at least 16 characters; use ${METRICS_TOKEN} to keep it out of the file. Empty: the main address answers 404.
   */
  token: string;
  /**
   * A separate address that serves only GET /metrics, without a token; bind it where only the scraper can reach it.
   */
  listen?: {
    host: string;
    port: number;
  };
}
/**
 * Fetching URLs that clients and upstreams name (image inputs, generated results): only public https on port 443, every address checked when the connection is made.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/network".
 */
export interface NetworkConfig {
  /**
   * Exceptions, none by default: `host` exempts that host from the public-address check (an internal provider); `host:port` also allows plain http and that port for it (loopback test servers).
   */
  allowHosts: string[];
  maxRedirects: number;
  /**
   * For one whole fetch, body included.
   */
  timeoutSeconds: number;
}
/**
 * The operator's own files, in a folder of their own beside the shipped ones, so an upgrade never overwrites them (docs/endpoints.md, "Your own files in an overlay folder"). The environment variable GATEWAY_OVERLAY_DIR, when set, takes the place of `dir`.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/overlay".
 */
export interface OverlayConfig {
  /**
   * The overlay folder: its channels/, channels/protocols/ (with tests/), catalogue/, schemas/requests/ and routes/ are read after the shipped folders, and its gateway.env is read into the environment at every load (start and reload). A channel of the same id as a shipped one is an error unless the overlay's file says `overrides: true`. A relative path resolves against the folder of the config file. Unset (and no GATEWAY_OVERLAY_DIR): no overlay.
   */
  dir?: string;
}
/**
 * Requests per minute per API key and per workspace, on every authenticated route. 0 means unlimited. Refused requests get 429 with retry-after.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/rate-limits".
 */
export interface RateLimitsConfig {
  perKey: {
    requestsPerMinute: number;
  };
  perWorkspace: {
    requestsPerMinute: number;
  };
}
/**
 * Request logs: one row per API request the gateway answers (time, workspace, key, route, model, channel, status, error, latency, time to first token, tokens, cost, request and trace ids), written with the settlement batches, listed on the dashboard's Logs page, by the admin API (GET /admin/v1/workspaces/{id}/requests) and by `npm run admin -- logs`. Requests refused before a key was recognised (401) belong to no workspace and are not logged. The usage ledger, not this log, is what billing reads.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/requestLogs".
 */
export interface RequestLogsConfig {
  /**
   * Write request-log rows. false: none are written (the pages and the API list what is kept).
   */
  enabled: boolean;
  /**
   * Rows (and their captured bodies) older than this are deleted by the hourly sweep.
   */
  retentionDays: number;
  /**
   * Workspace members (not only owners and admins) see their workspace's Logs page.
   */
  membersSee: boolean;
  /**
   * Store each request's and answer's body with its row, in the blob store (storage.blobs), size-capped, with secrets redacted (headers and fields at any depth whose name has a word key, secret, token, password, credential or authorization, but not token counts such as max_tokens; sk- keys, the gateway's own among them, AWS key ids and Bearer credentials in any string, any case), and deleted with the row. Off by default: prompts and answers are kept nowhere.
   */
  captureBodies: boolean;
  /**
   * Bytes kept of each captured body; the rest is cut, and the row says so.
   */
  maxBodyBytes: number;
  /**
   * Per-workspace overrides, by workspace name or id: captureBodies for this workspace alone.
   */
  workspaces: {
    [k: string]: {
      /**
       * Capture this workspace's bodies (true) or never (false), whatever the global switch says.
       */
      captureBodies?: boolean;
    };
  };
}
/**
 * Where route files are found (docs/routing.md): each names a public model id clients send and the targets (channels' models, or other routes) that serve it, with a strategy, failover and cooldown.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/routes".
 */
export interface RoutesConfig {
  /**
   * Folder of route YAML files (one route, or a list of them, a file). A relative path resolves against the folder of the config file. A folder that does not exist holds no routes.
   */
  dir: string;
}
/**
 * Where the gateway listens and how it logs. The PORT and HOST environment variables override host and port.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/server".
 */
export interface ServerConfig {
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Base URL clients reach the gateway at (https://gateway.example.com), used in signed file links. Empty: links use a trusted Host (trustedHosts) or else the address the request arrived on, and the gateway warns at start; the Host header alone never decides.
   */
  publicUrl: string;
  /**
   * Host header values (host or host:port) that signed links may use when publicUrl is empty, for a gateway reached under several names.
   */
  trustedHosts: string[];
  /**
   * Largest request body on routes without a bodyLimit of their own in the endpoint catalogue.
   */
  bodyLimitBytes: number;
  /**
   * Largest JSON answer an upstream may give a pipeline call (chat, messages, Responses, evaluate, images, a task's submit and status), read while it arrives: a larger one is refused with 502 upstream_malformed and the request charged its reservation (a task's submit fails it, a status answer is polled again) (64 MiB).
   */
  upstreamAnswerMaxBytes: number;
  /**
   * Most bytes of reference images (video input_reference uploads, image edit images and image_url references, Responses input images by file id) the process holds in memory at once, until each is sent upstream; a request that would pass it is refused with 503 and retry-after (256 MiB). A workspace file on the local blob store is streamed from disk and never counts.
   */
  referenceBytesInFlight: number;
  /**
   * How long a client may take to send a request, and to keep an idle connection (Node's HTTP server limits, and a floor on the rate a body arrives at). The defaults let a 25 MiB upload over a slow mobile link (64 kbit/s and up) pass, and cut a client that stalls or trickles a byte at a time after bodyGraceMs.
   */
  timeouts: {
    /**
     * Time from a request's first byte to the end of its headers; past it, 408 and the connection closed (Node's headersTimeout).
     */
    headersMs: number;
    /**
     * Longest time a request may take to arrive whole, headers and body; past it, 408 and the connection closed (Node's requestTimeout). Slow bodies are cut long before by minBodyBytesPerSecond; this bounds the rest. A headersMs above it counts as this.
     */
    requestMs: number;
    /**
     * An idle keep-alive connection is closed after this long without a request (Node's keepAliveTimeout).
     */
    keepAliveMs: number;
    /**
     * A request body arriving slower than this on average, once bodyGraceMs have passed, is cut: its connection closed (8 KiB/s: 25 MiB in 53 minutes). A stalled or trickling upload holds a socket and a handler for nothing.
     */
    minBodyBytesPerSecond: number;
    /**
     * Time a request body has before minBodyBytesPerSecond applies (a slow start, a client reading its file).
     */
    bodyGraceMs: number;
    /**
     * How often the limits above are checked (Node's connectionsCheckingInterval, and the body-rate check): a limit is enforced within this much of passing.
     */
    checkIntervalMs: number;
  };
  /**
   * Gateway processes serving on one port (node:cluster), sharing the database, the file store and the counters; spending caps and rate limits stay exact across them. Unset: one per CPU core; 1: a single process. A worker that dies is replaced; SIGTERM drains them all. An in-memory database (':memory:') runs one.
   */
  workers?: number;
}
/**
 * Where metadata, file bytes and counters live.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/storage".
 */
export interface StorageConfig {
  /**
   * Base folder for the embedded stores. A relative path resolves against the folder of the config file, not the working directory; database.path and blobs.path resolve against this folder.
   */
  dataDir: string;
  database: {
    /**
     * sqlite: one file under dataDir, shared by the workers and CLIs of one host. postgres: one database shared by several replicas (database.url or DATABASE_URL).
     */
    driver: 'sqlite' | 'postgres';
    /**
     * SQLite file, relative to dataDir (':memory:' for none).
     */
    path: string;
    /**
     * PostgreSQL connection URL (driver postgres); when empty, DATABASE_URL is used.
     */
    url?: string;
    /**
     * PostgreSQL schema for the gateway's tables (created when missing); default the connection's search_path.
     */
    schema?: string;
    /**
     * SQLite: how long the key and cap caches trust their change counter without a change signal. A change made through the gateway (admin API, dashboard, admin CLI, any process on the file) applies from the next request everywhere; one made around it (the sqlite3 shell) within this many seconds.
     */
    recheckSeconds: number;
  };
  blobs: {
    driver: 'local' | 's3';
    /**
     * Local folder, relative to dataDir.
     */
    path: string;
    endpoint?: string;
    region?: string;
    bucket?: string;
    accessKey?: string;
    secretKey?: string;
    useSSL?: boolean;
    pathStyle?: boolean;
  };
  cache: {
    driver: 'memory' | 'redis';
    /**
     * Redis URL (driver redis).
     */
    url?: string;
  };
}
/**
 * Asynchronous tasks (videos, model-family routes): how often the poller looks for due tasks, its leases, and overrides of what each protocol declares.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/tasks".
 */
export interface TasksConfig {
  /**
   * How often each process looks for due tasks.
   */
  tickMilliseconds: number;
  /**
   * How long a process holds a task it polls or archives (renewed while it works); a crashed holder's tasks are taken over after this.
   */
  leaseSeconds: number;
  /**
   * Due tasks claimed per look.
   */
  batchSize: number;
  /**
   * Consecutive 404 answers to a poll after which the task fails.
   */
  maxNotFound: number;
  /**
   * Largest result archived into the file store (512 MiB); a larger one completes with archive_status failed and the provider URL, or fails the task (nothing billed) when there is none.
   */
  archiveMaxBytes: number;
  /**
   * Overrides every task's timeoutSeconds.
   */
  timeoutSeconds?: number;
  /**
   * Most tasks one key may have unfinished (submitting, queued, in progress); another is refused with 429 and retry-after until one finishes.
   */
  maxInFlightPerKey: number;
  /**
   * Batches (/v1/batches, /v1/messages/batches): relayed to the vendor's batch API where the lines' channel's protocol declares one (docs/batches.md), else run by the gateway, each line an ordinary call at a bounded rate per channel.
   */
  batches: {
    /**
     * Most lines one process starts per channel at each look (tickMilliseconds): the rate per channel is at most linesPerTick / tick.
     */
    linesPerTick: number;
    /**
     * Most batch lines one process has in flight on one channel; interactive requests never wait behind them (they are not queued with them), and this bound keeps batch lines to a few of the channel's connections.
     */
    inFlightPerChannel: number;
    /**
     * Tries of one line when the upstream answers 408, 425, 429, 5xx, or cannot be reached; then the line goes to the error file.
     */
    maxAttempts: number;
    /**
     * Most lines in one batch (OpenAI's limit).
     */
    maxLines: number;
    /**
     * Largest line of a batch's input (a 400 at creation names the line past it).
     */
    maxLineBytes: number;
    /**
     * A batch not done by then expires: its unfinished lines go to the error file, unbilled.
     */
    completionWindowHours: number;
    /**
     * When a batch whose lines all go to one channel whose protocol declares a batch API (`batches:`) is sent there: `priced`, when every line's model declares `price.batch` (the operator's word that the vendor batches that model at that price); `always`; `never` (the gateway runs every batch). A channel whose `operations` leave out its protocol's batch operations is never relayed to; a vendor that answers the upload or the create with an error made no batch, and the gateway runs the lines itself.
     */
    relay: 'priced' | 'always' | 'never';
  };
  /**
   * Overrides every task's poll interval.
   */
  poll?: {
    firstSeconds?: number;
    maxSeconds?: number;
  };
}
/**
 * OpenTelemetry traces over OTLP/HTTP: a span per request with children for auth, reserve, the upstream call and settle, in the GenAI semantic conventions. Off unless otlp.endpoint is set; when off no OpenTelemetry code is loaded and requests do no tracing work.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/telemetry".
 */
export interface TelemetryConfig {
  otlp: {
    /**
     * Base URL of the OTLP/HTTP collector (e.g. http://127.0.0.1:4318); spans are POSTed as JSON to <endpoint>/v1/traces (a URL already ending in /v1/traces is used as is). Unset or empty: tracing is off.
     */
    endpoint?: string;
    /**
     * Headers sent with every export, e.g. an authorization token for the collector (use ${ENV} to keep it out of the file).
     */
    headers: {
      [k: string]: string;
    };
    /**
     * How long one export may take.
     */
    timeoutSeconds: number;
  };
  /**
   * The service.name resource attribute of every span.
   */
  serviceName: string;
  /**
   * Export prompts and completions (gen_ai.input.messages, gen_ai.output.messages: the request and answer JSON of a non-streamed call, each cut at 16 KiB). Off: no prompt or completion text leaves the gateway in a span.
   */
  captureContent: boolean;
}
/**
 * Task, batch and guardrail webhooks (each task family's <family>.completed and <family>.failed, such as video.completed; batch.completed, batch.failed, guardrail.blocked) that workspaces register: how each process looks for due deliveries, its leases, the time one attempt may take and the retry schedule. Endpoints themselves are managed through the admin API, the CLI and the dashboard.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "config/webhooks".
 */
export interface WebhooksConfig {
  /**
   * How often each process looks for due deliveries.
   */
  tickMilliseconds: number;
  /**
   * How long a process holds a delivery it sends (at least the attempt's timeout plus 5 seconds); a crashed holder's deliveries are sent again after this, under the same webhook-id.
   */
  leaseSeconds: number;
  /**
   * Due deliveries claimed per look.
   */
  batchSize: number;
  /**
   * One attempt, from connecting to the end of the answer; slower counts as a failed attempt.
   */
  timeoutSeconds: number;
  /**
   * Bytes of the receiver's answer read and kept (as the delivery's last_error on a failure); the rest is discarded unread.
   */
  maxAnswerBytes: number;
  /**
   * Attempts before a delivery is marked failed.
   */
  maxAttempts: number;
  /**
   * Wait before the 2nd, 3rd, ... attempt (the Standard Webhooks example schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h); the last entry repeats. Each wait gets up to 10% random jitter, and is at least a 429 or 503 answer's retry-after.
   *
   * @minItems 1
   * @maxItems 20
   */
  retrySeconds: number[];
  /**
   * After a secret is rotated, deliveries are signed with the old secret as well as the new one for this long (two signatures in webhook-signature), so receivers can switch without losing events.
   */
  rotationGraceSeconds: number;
}
/**
 * One upstream provider: where it is, how it is reached and which models it serves at what price.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "channel".
 */
export interface ChannelSchema {
  id: string;
  description?: string;
  enabled: boolean;
  /**
   * In the overlay folder (config `overlay`): this file takes the place of the shipped channel with the same id, which is then not read. Without it, a channel id in both the overlay and the shipped channels/ is an error.
   */
  overrides: boolean;
  /**
   * Id of a protocol in channels/protocols/.
   */
  protocol: string;
  baseUrl: string;
  /**
   * The protocol operations this vendor serves; by default every one its protocol declares. An OpenAI-compatible vendor without the Responses API lists `[chat]`: Responses requests to its models are then translated to chat (docs/translation.md), and image requests are refused.
   *
   * @minItems 1
   */
  operations?: string[];
  /**
   * Among channels serving a fallback model, lower is tried first.
   */
  priority: number;
  /**
   * How requests to the channel are authenticated: one credential, or a list of alternatives of which the first whose variables are all set is used (an API key, else a client id and secret, say). A channel none of whose credentials has its variables set starts disabled and says which are missing. Omit it for a keyless upstream (a local server such as Ollama): no auth header is sent and the channel serves as `enabled` says (channels/ollama.yaml reads it from the environment). The base URL is the operator's own and is not subject to network.allowHosts; URLs the upstream answers with are.
   */
  credential?:
    | {
        [k: string]: unknown;
      }
    | unknown[];
  /**
   * A key pool: several credentials that all serve (several API keys of one vendor, an Azure OpenAI resource per region), instead of `credential`. Every entry whose variables are set serves; requests are spread by `weight`. A 429 or 401 on one entry cools it (`credentialCooldown`) and the request goes on to the next entry of the channel, so the client sees the error only when no entry can serve. An entry may carry its own `baseUrl`. Entries must see the same stored objects (files, tasks, response ids) when the channel serves them: keys of one account or project. docs/config.md, "Key pools".
   *
   * @minItems 1
   */
  credentials?: ChannelCredential[];
  /**
   * How long a key-pool entry (`credentials`) rests after the upstream refused it.
   */
  credentialCooldown: {
    /**
     * After a 429: the upstream's `retry-after` when it sent one (at most `revokedSeconds`), else this.
     */
    seconds: number;
    /**
     * After a 401 (a revoked or wrong key): the entry is logged once and tried again after this.
     */
    revokedSeconds: number;
  };
  /**
   * Variables the channel needs whatever its credential (one its `baseUrl` reads, say): while one is not set, the channel starts disabled and says which.
   */
  requiresEnv?: string[];
  /**
   * Extra headers sent upstream (Liquid, with `credential` in scope).
   */
  headers?: {
    [k: string]: string;
  };
  timeouts: {
    connectMs: number;
    headersMs: number;
    bodyMs: number;
    /**
     * Overall deadline of one upstream call, streams included (an upstream trickling a byte at a time never passes it); past it the call ends with 504. An operation may set its own.
     */
    deadlineMs: number;
  };
  /**
   * Retries of one upstream call, made only before any byte of an answer is read: connection failures, 429 and 5xx. Off unless `max` is set.
   */
  retries: {
    /**
     * Retries per call.
     */
    max: number;
    /**
     * At most this fraction of the channel's calls may be retries (a token bucket: each call adds `budget`, each retry takes 1, up to `burst`).
     */
    budget: number;
    /**
     * Retries the budget can hold.
     */
    burst: number;
    /**
     * First back-off; doubles per retry.
     */
    minDelayMs: number;
    /**
     * Longest wait, `retry-after` included; an upstream asking for longer is not retried.
     */
    maxDelayMs: number;
  };
  /**
   * The channel's circuit breaker: after `failures` consecutive failed calls (unreachable, timed out, 5xx) it opens and calls fail at once (503, or the next route of a fallback group); after `coolDownMs` one probe call is let through, and its success closes it.
   */
  breaker: {
    failures: number;
    coolDownMs: number;
  };
  pool: {
    /**
     * Most connections open to this channel at once. Every streaming answer holds one for its whole length, so this is also the most concurrent streams the channel serves before new requests wait for a connection.
     */
    connections: number;
    pipelining: number;
  };
  /**
   * @minItems 1
   */
  models: ModelConfig[];
}
/**
 * A model a channel serves, under the id clients send.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "model".
 */
export interface ModelConfig {
  /**
   * Id clients send.
   */
  id: string;
  /**
   * Id sent upstream (default: id).
   */
  upstream?: string;
  /**
   * Other ids clients may send for this model, as the vendor names it: dated snapshots (`claude-haiku-4-5-20251001`), `-latest` names. Resolved to this model wherever a model id is read (routing, GET /v1/models, per-model budgets); the answer echoes the id the client sent, while usage, metrics and budgets record the model's `id`. An alias may not be another model's id or alias.
   *
   * @maxItems 32
   */
  aliases?: string[];
  /**
   * chat, evaluation, image, video, or a kind an endpoint of the catalogue declares (`modelKind`: embedding, moderation, transcription, speech, rerank, ...).
   */
  kind: string;
  /**
   * Several channels may serve this id when each declares fallback; they are tried by priority.
   */
  fallback: boolean;
  /**
   * The model a request of its kind gets when it names none, where the endpoint's request schema lets `model` out (OpenAI's POST /v1/moderations defaults to omni-moderation-latest). At most one model id of a kind.
   */
  defaultForKind: boolean;
  enabled: boolean;
  price: PriceConfig;
  cache?: RouteRouteCache;
  evaluation?: ModelEvaluationConfig;
  media?: ModelMediaConfig;
  /**
   * Chat models: an OpenAI-style reasoning model. Translated requests carry `reasoning_effort` (from an Anthropic `thinking` budget or a Responses `reasoning.effort`, by the bands in the protocol's translation) and bound output with `max_completion_tokens` unless outputBound says otherwise. Never sent upstream (docs/translation.md).
   */
  reasoning: boolean;
  /**
   * Chat models on an OpenAI chat protocol: the field a translated request bounds output with (default: max_completion_tokens for a reasoning model, else max_tokens). Never sent upstream.
   */
  outputBound?: 'max_tokens' | 'max_completion_tokens';
  /**
   * Chat models on an Anthropic Messages protocol: takes extended thinking. `true`: with a budget, so a translated `reasoning_effort` (or Responses `reasoning.effort`) becomes `thinking: {type: enabled, budget_tokens}` by the protocol's table, with max_tokens raised above it. `adaptive`: the model decides how much to think and takes no budget (Anthropic refuses `budget_tokens` on such models), so the effort becomes `thinking: {type: adaptive}` and `output_config.effort` by the protocol's table. Never sent upstream.
   */
  thinking: false | true | 'adaptive';
  /**
   * Chat models on an OpenAI chat protocol: continues a final assistant message sent with `prefix: true` (DeepSeek, Mistral). Without it a translated request ending in an assistant turn is refused (400), since the model would start a new message. Never sent upstream.
   */
  prefill: boolean;
  /**
   * Chat models on an Anthropic Messages protocol: takes structured outputs (`output_config.format` and strict tools). A translated json_schema format becomes `output_config.format` and a strict tool a strict tool; without it a json format is answered through one forced tool, and a strict tool is refused. Never sent upstream.
   */
  structuredOutputs: boolean;
  /**
   * The day (UTC, YYYY-MM-DD) the vendor deprecated the model. Answers for it carry a `deprecation` header (RFC 9745, `@<unix seconds>`; a future day is sent too, as the RFC allows) and GET /v1/models shows it; check-config warns once the day has passed.
   */
  deprecatedAt?: string;
  /**
   * The day (UTC, YYYY-MM-DD) the vendor stops serving the model. Answers carry a `sunset` header (RFC 8594). From that day the model is never sent upstream: a request for it is refused (404, naming the replacement) or served by `replacement`, as `channels.retiredModels` says; check-config warns. In a fallback group only the entries past their own day are skipped.
   */
  retiresAt?: string;
  /**
   * Id (or alias) of the model the vendor recommends instead, of the same kind: named in the refusal of a retired model, or serving its requests (channels.retiredModels: replace).
   */
  replacement?: string;
  limits?: ModelLimits;
}
/**
 * What a model costs, in currency units (USD unless currency says otherwise). At least one of inputPerMillion, outputPerMillion, cachedInputPerMillion, perRequest, perImage, perVideoSecond, perMinute, perMillionCharacters, perThousandSearches, units, free is required: a model with no price is a config error, never a silent zero. A request is charged the usage the upstream reports, each token class at its price and each unit at its own (see docs/config.md, "Billing"; docs/endpoints.md, "A family billed in a unit of its own").
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "price".
 */
export interface PriceConfig {
  batch?: PriceConfig;
  currency: string;
  /**
   * Per million input tokens not billed in another class below (uncached, not written to a cache, not audio).
   */
  inputPerMillion?: number;
  /**
   * Per million output tokens (reasoning tokens included), audio output aside.
   */
  outputPerMillion?: number;
  /**
   * Per million input tokens read from the prompt cache (OpenAI `prompt_tokens_details.cached_tokens`, `input_tokens_details.cached_tokens`; Anthropic `cache_read_input_tokens`). Default: inputPerMillion.
   */
  cachedInputPerMillion?: number;
  /**
   * Per million input tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`; the 5-minute write, 1.25x input on Anthropic's price list). Default: inputPerMillion.
   */
  cacheWritePerMillion?: number;
  /**
   * Per million input tokens written to the 1-hour cache, where the vendor prices them apart (Anthropic: 2x input), read from usage `cache_creation.ephemeral_1h_input_tokens`. Default: cacheWritePerMillion.
   */
  cacheWrite1hPerMillion?: number;
  /**
   * Per million audio input tokens (`prompt_tokens_details.audio_tokens`), for a model that declares an audio price. Default: inputPerMillion.
   */
  audioInputPerMillion?: number;
  /**
   * Per million audio output tokens (`completion_tokens_details.audio_tokens`). Default: outputPerMillion.
   */
  audioOutputPerMillion?: number;
  /**
   * Per request, added to the token cost.
   */
  perRequest?: number;
  /**
   * Per image: one number, or a map of `<size>` / `<size>:<quality>` / `default` to a number. A size or quality the map does not list, `auto`, or none at all is priced at the priciest entry it could be (never 0), at the estimate and at settlement; a model that declares `media.sizes` refuses any other size with 400.
   */
  perImage?:
    | number
    | {
        [k: string]: number;
      };
  perVideoSecond?: number;
  /**
   * Per minute of audio (transcription), charged by the second: the `seconds` the usage mapping reports, else the upload's duration as the gateway measured it (`pipeline.durationOf`). Reserved as the measured duration, or `media.maxAudioSeconds` of the model (default 3600) when it cannot be measured; neither known at settlement: the reservation is charged.
   */
  perMinute?: number;
  /**
   * Per million characters of the request field the endpoint names (`pipeline.charactersOf`; speech: `input`), counted by the gateway.
   */
  perMillionCharacters?: number;
  /**
   * Per thousand search units (rerank), from the `searches` the usage mapping reports. Estimated as Cohere counts them: one unit per query of up to 100 documents, a document over 500 tokens (the query's included) counting once per 500, each byte taken as a token.
   */
  perThousandSearches?: number;
  /**
   * Units of the model's own, by the name the operation's usage mapping reports them under (`pages`, `images`): each priced per unit, per thousand or per million (or declared free), with how a request reserves it. check-config proves every unit priced here is read by the usage mapping of each operation serving the model, and every unit the mapping reads is priced here or declared free. The built-in units (`seconds`, `searches`, `characters`, priced by perMinute, perThousandSearches, perMillionCharacters) may be declared free here, for a model on an operation that reads them without pricing them.
   */
  units?: {
    /**
     * One unit the operation's usage mapping reports under this name (e.g. `pages: "{{ usage.pages_processed }}"`): its price, what a request reserves, and the most it may use. Exactly one of each, perThousand, perMillion or free (check-config says which is missing).
     */
    [k: string]: {
      /**
       * Per unit (per page, per image).
       */
      each?: number;
      /**
       * Per thousand units.
       */
      perThousand?: number;
      /**
       * Per million units.
       */
      perMillion?: number;
      /**
       * The usage mapping reads this unit, and it costs nothing: declared, so a unit read is never priced at zero by mistake.
       */
      free?: true;
      reserve?: PriceCount;
      most?: PriceCount;
    };
  };
  /**
   * The model costs nothing (moderation). Its calls are still counted in usage.
   */
  free?: true;
}
/**
 * Absent: this route's answers are never cached. Present: an exact response cache (docs/caching.md): a repeated request of one workspace, for the same route and the same canonical body (stream flags left out), is answered from the store config.yaml `cache:` names, with `x-cache: hit`.
 *
 * This interface was referenced by `RouteFile`'s JSON-Schema
 * via the `definition` "routeCache".
 */
export interface RouteRouteCache {
  /**
   * How long an answer is kept (at most config.yaml cache.maxTtlSeconds). A client's `x-cache-ttl` header may shorten it, never lengthen it.
   */
  ttlSeconds: number;
  /**
   * What a hit is charged: `free`, or a fraction (0 to 1) of what the answer cost when it was fetched. Booked in the ledger as kind `cache_hit`.
   */
  hitPrice: 'free' | number;
  /**
   * With `hitPrice: free` only: a hit is served to a key or workspace whose spending cap is spent (it costs nothing, and is still booked as a `cache_hit` row of 0). Default false: a spent cap refuses even a free hit, as it refuses the call upstream.
   */
  hitsPastCap: boolean;
  /**
   * Opt-in: a one-message request without tools whose exact key missed is embedded by `model` (an internal call billed like any) and answered from the stored answer of the nearest earlier request of the same workspace whose cosine similarity reaches `threshold` (docs/caching.md). Never for conversations of several turns, tools, or anything but text.
   */
  semantic?: {
    /**
     * An embeddings model this gateway serves (a model id or alias of its channels).
     */
    model: string;
    /**
     * The least cosine similarity that counts as the same question.
     */
    threshold: number;
    /**
     * Vectors this route keeps per process, oldest out first.
     */
    maxEntries: number;
  };
  /**
   * Only requests of these endpoint families are cached, by the catalogue's `pipeline.operation` (`chat`, `responses`, `embeddings`, `moderations`, `rerank`, ...); others pass as `x-cache: bypass`. Absent: every family the route serves. check-config refuses a name no catalogue entry sends. Workspaces and keys may narrow it further, never widen it.
   *
   * @minItems 1
   */
  families?: string[];
  /**
   * The largest answer this route stores (bytes): the smaller of this and config.yaml cache.maxEntryBytes (workspaces and keys may set a smaller one). Absent: config.yaml's.
   */
  maxEntryBytes?: number;
  /**
   * The token counts a hit's ledger row carries: `zero` (no tokens were used; usage reports never double-count), or `reported` (the counts of the original answer).
   */
  hitTokens: 'zero' | 'reported';
  /**
   * Requests cached although their answer may differ from one call to the next: `sampled` (temperature above 0, or absent, with no seed), `tool-results` (a tool's result in the conversation), `image-urls` (an image by URL, whose content may change), `conversation-state` (Responses' previous_response_id or conversation). Without them such requests pass with `x-cache: bypass`.
   */
  allow: ('sampled' | 'tool-results' | 'image-urls' | 'conversation-state')[];
}
/**
 * Per-model overrides of its protocol's evaluate section (logprobs mode).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "model-evaluation".
 */
export interface ModelEvaluationConfig {
  /**
   * Least label probability mass accepted (protocol default 0.5).
   */
  labelMassThreshold?: number;
  /**
   * Upstream calls in flight at once per request (protocol default 8).
   */
  concurrency?: number;
}
/**
 * Image and video settings of a model of kind image or video (owned by the media capability).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "model-media".
 */
export interface ModelMediaConfig {
  [k: string]: unknown;
}
/**
 * What the model can take and give, from the vendor's model card. Read by the estimate (the worst case reserved against spending caps) and by the check of reported usage; never sent upstream. A model without limits is estimated, and its reported usage bounded, with `billing.defaultLimits` (widened to the request's bytes and output bound).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "model-limits".
 */
export interface ModelLimits {
  /**
   * The context window in tokens (input, cached input and output together). A request referencing input the gateway cannot measure (`previous_response_id`, a conversation, remote images or files, server-side tools) reserves this much input. Reported usage above contextTokens + maxOutputTokens per choice is upstream_malformed.
   */
  contextTokens: number;
  /**
   * The most output tokens one answer may have: the output bound of the estimate when the client sets none. No bound is ever added to the request itself.
   */
  maxOutputTokens: number;
}
/**
 * A named check on what goes in to an upstream and what comes out (docs/guardrails.md). A file holds one guardrail or a list of them. Routes name guardrails in their `guardrails`; a guardrail names models in its `models`; `offered: true` lets workspaces and keys add it.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "guardrail".
 */
export interface GuardrailFile {
  [k: string]: unknown;
}
/**
 * This interface was referenced by `GuardrailFile`'s JSON-Schema
 * via the `definition` "pattern".
 */
export interface GuardrailPattern {
  /**
   * Default `pattern`. What a match is called in a redaction (`[REDACTED:name]`) and in the request log.
   */
  name?: string;
  /**
   * An RE2 regular expression (run by re2js: linear time, so no pattern can backtrack for ever; no lookaround, no backreferences).
   */
  regex: string;
  /**
   * Default false.
   */
  caseInsensitive?: boolean;
}
/**
 * This interface was referenced by `GuardrailFile`'s JSON-Schema
 * via the `definition` "guardrail".
 */
export interface GuardrailGuardrail {
  /**
   * The name routes, workspaces and keys use; a block names it to the client (`guardrail_blocked`).
   */
  id: string;
  description?: string;
  /**
   * `pattern`: shipped detectors and regular expressions; `moderation`: a moderation model of the catalogue; `http`: a guard service the operator runs; `schema`: the answer is JSON valid against a schema; `limits`: the prompt's size, images, tools and parameters.
   */
  kind: 'pattern' | 'moderation' | 'http' | 'schema' | 'limits';
  /**
   * pattern: shipped detectors: `email`, `phone`, `payment-card` (Luhn-checked), `iban` (checksum-checked), `secret` (API keys and tokens of common vendors), `private-key` (PEM blocks).
   */
  detectors?: string[];
  /**
   * pattern: the operator's own regular expressions (RE2 syntax), a string or `{ name, regex, caseInsensitive }`.
   *
   * @maxItems 64
   */
  patterns?: (string | GuardrailPattern)[];
  /**
   * pattern, `phone`: the country a number written without its +code is read as (ISO 3166 alpha-2).
   */
  phoneRegion: string;
  /**
   * Where it runs: `input` (the client's text before the upstream sees it), `output` (the answer's text), `stream` (a streamed answer's text, checked on a window as it passes). Each kind runs where it can: pattern at any stage; moderation, http and limits at input; schema at output. Default: input (output for schema).
   */
  stage?: ('input' | 'output' | 'stream') | ('input' | 'output' | 'stream')[];
  /**
   * `block`: input refused with 400 `guardrail_blocked` naming the guardrail, output ended as filtered, a stream cut with an error event; `redact` (pattern, http): the matched spans replaced by `[REDACTED:<name>]`; `flag`: passed, and recorded.
   */
  action: 'block' | 'redact' | 'flag';
  /**
   * pattern, action redact, input stage: each redacted value gets a numbered placeholder (`[REDACTED:email:1]`), and the placeholders the answer carries are put back as the values for that request (whole and streamed answers); such answers are never cached, and a captured answer keeps the placeholders.
   */
  restore: boolean;
  /**
   * http and moderation: past `timeoutMs`, or when the check's call fails, `open` passes the text and `closed` blocks it (a guardrail whose action is flag flags it).
   */
  failMode: 'open' | 'closed';
  /**
   * http and moderation: the check's deadline, in milliseconds.
   */
  timeoutMs: number;
  /**
   * Model ids or aliases this guardrail applies to, whether named directly or reached through a route.
   */
  models?: string[];
  /**
   * Workspaces and keys may add this guardrail (admin API `guardrails`); a guardrail no route or model names must be offered.
   */
  offered: boolean;
  /**
   * moderation: the model to ask and the scores that match.
   */
  moderation?: {
    /**
     * A moderation model of the catalogue (kind moderation), a route or an alias of one: called through the gateway as an internal call billed to the workspace and key like any call.
     */
    model: string;
    /**
     * Category (as the model names it: `harassment`, `violence/graphic`) to the score at or above which it matches; `"*"` for every category not named. With neither this nor `threshold`, the categories the model itself flags match.
     */
    thresholds?: {
      [k: string]: number;
    };
    /**
     * The score at or above which any category `thresholds` does not name matches.
     */
    threshold?: number;
  };
  /**
   * http: the operator's guard service (docs/guardrails.md, "The http guard protocol").
   */
  http?: {
    /**
     * Where the check is POSTed.
     */
    url: string;
    /**
     * The variable holding the key requests are signed with, as webhooks are (Standard Webhooks: `webhook-id`, `webhook-timestamp`, and `webhook-signature` = `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`); a `whsec_` value is base64, any other value is used as its bytes. A variable named and not set is a config error.
     */
    secretEnv?: string;
  };
  /**
   * schema (output stage): the JSON Schema (2020-12, or draft-07 when its `$schema` says so) the answer's text must parse as and be valid against; checked by check-config.
   */
  schema?: {
    [k: string]: unknown;
  };
  /**
   * limits (input stage): what a request may hold; any one passed blocks it (or flags it).
   */
  limits?: {
    /**
     * The most input tokens, estimated as the reservation estimates them: the request body's bytes / 3 (errs high).
     */
    maxPromptTokens?: number;
    /**
     * The most images (chat `image_url`, Messages `image`, Responses `input_image` parts).
     */
    maxImages?: number;
    /**
     * Tool names a request may not offer (a function's `name`, or a server tool's `type`).
     */
    forbiddenTools?: string[];
    /**
     * Request members a request may not set: a top-level name (`logit_bias`) or a dotted path (`reasoning.effort`).
     */
    forbiddenParams?: string[];
  };
}
/**
 * An upstream MCP server the gateway serves to its keys (docs/mcp.md): one file under mcp.dir, Streamable HTTP (`url`) or a local command over stdio (`command`, only where mcp.allowCommands is true).
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "mcp".
 */
export interface McpServerSchema {
  /**
   * The server's name: its endpoint is /mcp/{id}, and /mcp lists its tools as `{id}__{tool}`.
   */
  id: string;
  /**
   * The server's Streamable HTTP endpoint. One of `url` and `command`.
   */
  url?: string;
  /**
   * A local command (program and arguments) spoken to over stdio, one process per gateway worker; refused unless mcp.allowCommands is true.
   *
   * @minItems 1
   */
  command?: string[];
  /**
   * command: the variables the command's process gets (besides PATH and HOME); `${VAR}` references are read from the gateway's environment.
   */
  env?: {
    [k: string]: string;
  };
  /**
   * How the gateway authenticates to the server: one of the channel credential kinds (docs/config.md, "Credentials"), sent on every request to it; a static key goes in `authorization` as `Bearer <key>` unless its `header` and `value` say otherwise. A server whose credential's variables are not set starts disabled. Clients never see it. Or `{ passthrough: <header> }`: the user's own token, which the client sends on that header (`passthrough` below).
   */
  credential?:
    | {
        [k: string]: unknown;
      }
    | unknown[];
  /**
   * Which of the server's tools the gateway exposes at all (grants then say which keys may call them). Names, or patterns with `*`.
   */
  tools: {
    allow: string[];
    deny: string[];
  };
  /**
   * USD charged per tool call, booked in the ledger and held against the key's and workspace's caps like a model call: one price for every tool, or prices by tool name (`"*"` for the others). Default free.
   */
  pricePerCall?:
    | number
    | {
        [k: string]: number;
      };
  /**
   * Tool calls per minute, on top of the gateway's rate-limits section; 0 or absent means unlimited. Over the limit, the call is refused with an MCP error saying when to retry.
   */
  rateLimits: {
    /**
     * Calls per minute one API key may make to this server.
     */
    perKey: number;
    /**
     * Calls per minute of one tool, by every key together (protects the server).
     */
    perTool: {
      [k: string]: number;
    };
  };
  /**
   * How long a request to the server (a tool call, a listing) may take before it fails with an MCP timeout error.
   */
  timeoutSeconds: number;
  /**
   * The most bytes an answer of the server may hold; a larger one fails the call with an MCP error (never relayed in part).
   */
  maxResultBytes: number;
}
/**
 * The user's own token for the server, passed through (docs/mcp.md, "The user's own token"): the client sends it to the gateway on the header `passthrough` names, and the gateway forwards it to this server only, in `header` as `value` says, never to another server, never logged. A call without it is refused.
 *
 * This interface was referenced by `McpServerSchema`'s JSON-Schema
 * via the `definition` "passthrough".
 */
export interface McpPassthrough {
  /**
   * The header the client sends its token on (`x-github-token`); not one the gateway reads itself (authorization, x-api-key, cookie).
   */
  passthrough: string;
  /**
   * The header the server gets the token in (default `authorization`).
   */
  header?: string;
  /**
   * The header's value (Liquid, with the token as `credential`; default `Bearer {{ credential }}`).
   */
  value?: string;
}
/**
 * Where an operation's answer reports usage and how it becomes token counts; the one place usage is read, for pass-through and translated calls alike. An answer without usage, or a stream whose final usage event never arrived, is charged the reservation.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "operation-usage".
 */
export interface UsageSpec {
  /**
   * Liquid path of the raw usage object in a JSON answer (e.g. `"{{ answer.usage }}"`).
   */
  from?: string;
  /**
   * SSE event name (`message` when the upstream names none) to where that event carries usage. Values from later events win field by field; usage counts as final only once an event marked `final` has carried it.
   */
  events?: {
    [k: string]: {
      /**
       * Liquid path of the raw usage object in the event's parsed data (e.g. `"{{ event.message.usage }}"`).
       */
      from: string;
      /**
       * This event carries the protocol's final usage.
       */
      final: boolean;
    };
  };
  /**
   * Mapping from the raw usage (scope: usage) to {inputTokens, outputTokens} and, where the upstream reports them, the classes billed at their own price: cachedInputTokens (cache reads), cacheWriteTokens (every cache write), cacheWrite1hTokens (the 1-hour writes among them), audioInputTokens, audioOutputTokens; each class is counted inside inputTokens or outputTokens. reasoningTokens (output spent reasoning, inside outputTokens) is only reported back to clients (completion_tokens_details, output_tokens_details), never priced apart. Each is a count, null when not reported, or a list of counts to add up. Counts must be non-negative integers, and in all no more than the model's declared limits allow, else the answer is malformed (502, charged the reservation). Both inputTokens and outputTokens null means no usage was reported. Any other key is a unit, for models priced by it: `seconds` (audio seconds, any non-negative number; `perMinute`), `searches` (search units; `perThousandSearches`), or a unit a price names in `units` (`pages`, `images`: a non-negative integer). Each unit read must be priced by every model the operation serves, or declared free there (check-config), and is bounded by what the request makes possible (docs/endpoints.md, "Price units").
   */
  tokens: unknown;
}
/**
 * The vendor's own batch API (docs/batches.md, "Relayed to a vendor's batch API"): a batch whose lines all go to one channel of this protocol, each mapped to one of `operations`, is sent there as one upload or one create request instead of being run line by line by the gateway, polled at the runner's looks, and its results read back line by line through the pipeline (translated to the client's dialect, billed from their reported usage at the models' batch prices). Each step is an operation declared under the protocol's `operations`; every mapping is data. Not taken by a protocol that `extends` this one: a vendor's batch API is its own.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "protocol-batches".
 */
export interface BatchApiSpec {
  /**
   * The operations whose requests the vendor batches (`chat`, `responses`, `embeddings`): a batch is relayed only when every line maps to the same one of them; any other batch is run by the gateway.
   *
   * @minItems 1
   */
  operations: string[];
  /**
   * One request as the vendor's batch takes it: a JSON line of the upload, or an item of the create request's `lines`. Scope: custom_id (the gateway's id of the line, `line-<n>`, valid under every vendor's rule; the client's own ids never leave the gateway), method and path (the operation's), url (the channel's base path and the operation's path: `/v1/chat/completions`), body (the request as the pipeline maps it for the channel: the upstream model id, a translation done).
   */
  line: unknown;
  /**
   * Where the lines go first, as one JSONL file (OpenAI's Files API); absent, they travel in the create request.
   */
  upload?: {
    /**
     * The upload operation (`encoding: multipart`).
     */
    operation: string;
    /**
     * Mapping to the upload's fields. Scope: file (the JSONL as a file part, `<batch id>.jsonl`), url (as for `line`), batch_id (the gateway's).
     */
    request: unknown;
    /**
     * Mapping to the uploaded file's id. Scope: answer.
     */
    id: unknown;
  };
  /**
   * The call that makes the vendor batch. Sent once: an answer of any error status (the vendor made no batch) lets the gateway run the lines itself; no answer at all (the connection lost after sending) fails the batch, since the vendor may have made it.
   */
  create: {
    operation: string;
    /**
     * Mapping to the create request. Scope: file_id (the upload's id; nil without `upload`), lines (every mapped line, in input order; for a vendor that takes them inline), url (as for `line`), batch_id (the gateway's: a metadata value ties the two together).
     */
    request: unknown;
    /**
     * Mapping to the vendor batch's id. Scope: answer.
     */
    id: unknown;
  };
  poll: {
    /**
     * Reads the vendor batch; its path has `upstream_id` (the vendor batch's id) in scope.
     */
    operation: string;
    /**
     * The wait between two polls: a tenth of the time the vendor batch has run, at least `firstSeconds` and at most `maxSeconds`.
     */
    interval: {
      firstSeconds: number;
      maxSeconds: number;
    };
    /**
     * Mapping to the vendor's status word. Scope: answer.
     */
    status: unknown;
    /**
     * Vendor status word to the gateway's: in_progress (polled again), completed, cancelled or expired (its results read, the batch ends so), failed (the batch fails; results are not read). A word not listed is kept as in_progress. Some word must map to completed.
     */
    statusMap: {
      [k: string]: 'in_progress' | 'completed' | 'failed' | 'expired' | 'cancelled';
    };
    /**
     * Mapping to {code, message} of a failed vendor batch, shown in the batch's `errors` and the error file. Scope: answer.
     */
    error?: unknown;
  };
  /**
   * The downloads of an ended vendor batch, read in order, each a JSONL document of per-line results (OpenAI's output file, then its error file; Anthropic's results).
   *
   * @minItems 1
   */
  results: {
    /**
     * An operation answering the JSONL (`response: binary`); its path has `upstream_id` and every value of `params` in scope.
     */
    operation: string;
    /**
     * Mapping to an object of values for the operation's path (each URL-encoded); one that is nil skips the download (no such file). Scope: answer (the last poll's answer).
     */
    params?: unknown;
  }[];
  /**
   * Mapping of one result line to {customId, status, body, error}: the `custom_id` the gateway sent, the HTTP status of the vendor's answer to it and that answer (read back through the pipeline: a 2xx is translated and billed, any other status is the line's error, unbilled), or, for a line with no answer, error {code, message}. Scope: line (the parsed JSON line).
   */
  result: unknown;
  /**
   * What the vendor keeps of a relayed batch, deleted once the gateway no longer needs it (OpenAI's upload, output and error files; Anthropic's batch and its results): after the batch ended with its results read (or failed), and, for an upload whose create the vendor refused, that upload. Best-effort: a failed delete is logged and never fails the batch; an operation the channel does not serve is skipped.
   */
  cleanup?: {
    /**
     * A delete; its path has `upstream_id` and every value of `params` in scope.
     */
    operation: string;
    /**
     * Mapping to an object of values for the operation's path; one that is nil skips the call (nothing of that kind). Scope: answer (the last poll's answer; nil when no vendor batch was made), file_id (the upload's id when its create was refused; else nil).
     */
    params: unknown;
  }[];
  /**
   * Relays a client's cancel; the batch ends cancelled once the vendor's batch has ended, with the answers it had.
   */
  cancel?: {
    /**
     * Its path has `upstream_id` in scope.
     */
    operation: string;
  };
}
export interface ProtocolEvaluate {
  mode: 'native' | 'logprobs';
  /**
   * Operation (under `operations`) each upstream call uses.
   */
  operation: string;
  /**
   * native: question type sent upstream in place of the client's type (e.g. boolean -> noul); answers come back under the alias and are mapped back.
   */
  typeAliases?: {
    [k: string]: 'boolean' | 'noul' | 'choice' | 'score';
  };
  /**
   * native: mapping yielding the upstream body. Scope: model (upstream id), state, questions (by id, with aliased types).
   */
  request?: unknown;
  /**
   * native: mapping from the upstream answer to {answers: {id: answer}}. Scope: body (the upstream answer); usage is read by the operation's `usage` block.
   */
  response?: unknown;
  /**
   * logprobs: fields added to every chat request; they ask for exactly one token and its top alternatives.
   */
  parameters: {
    [k: string]: unknown;
  };
  /**
   * logprobs: the single-token labels the model answers with. Matched ignoring case and leading whitespace.
   */
  labels: {
    yes: string;
    no: string;
    /**
     * One label per option, in order (20, the most options a choice may have).
     *
     * @minItems 20
     */
    choice: string[];
    /**
     * One label per score level, in order (10, the most levels a score may have).
     *
     * @minItems 10
     */
    score: string[];
  };
  /**
   * logprobs: Liquid prompts. The state message comes first and renders the same for every question of a request, so upstream prefix caching can reuse it. Scope: state (text), question {id, type, instructions, options [{label, key, description}], levels [{label, index, description}]}, labels {yes, no}.
   */
  prompts?: {
    state: {
      role: 'system' | 'developer' | 'user';
      content: string;
    };
    /**
     * User message for boolean and noul questions.
     */
    boolean: string;
    choice: string;
    score: string;
  };
  /**
   * logprobs: least total probability the labels must hold among the top logprobs; below it the question fails instead of guessing.
   */
  labelMassThreshold: number;
  /**
   * logprobs: upstream calls in flight at once per request.
   */
  concurrency: number;
}
/**
 * Asynchronous tasks the protocol runs (videos, model-family image routes): task name to how it is submitted once, polled with back-off, and how its result is archived and billed. A new task API is one protocol file and no code.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "protocol-tasks".
 */
export interface ProtocolTasks {
  [k: string]: TaskSpec;
}
/**
 * Headers sent with this step's call only (e.g. an async switch on create), beside the protocol's and the channel's. They may not name the auth header, content-type or content-length.
 *
 * This interface was referenced by `ProtocolTasks`'s JSON-Schema
 * via the `definition` "headers".
 */
export interface ProtocolTasksHeaders {
  [k: string]: string;
}
/**
 * One task: submitted once, polled with back-off until its statusMap says completed or failed, its result archived and billed. Every operation it names must be declared under the protocol's `operations` (check-config says where one is not).
 *
 * This interface was referenced by `ProtocolTasks`'s JSON-Schema
 * via the `definition` "task".
 */
export interface TaskSpec {
  /**
   * The kind of model the task serves: the catalogue entry of `flow: task` whose modelKind this is runs it (its wire object, id prefix, scope and billing are that entry's; check-config says where no entry serves the kind).
   */
  kind: string;
  /**
   * A model-family creation route (e.g. /v1/gen4/text_to_image, also served under /api), for a kind whose task entry says `routes: declared`. Its tasks are read at GET /api/v1/tasks/{id}.
   */
  route?: string;
  /**
   * A task not finished this long after creation fails (nothing billed); its reservation holds budget this long. The gateway config's tasks.timeoutSeconds overrides it.
   */
  timeoutSeconds: number;
  /**
   * The success check of an HTTP 2xx answer, applied to every JSON answer of the task (submit, poll, result step): null when the answer is a success, else {code, message, retry}. A refused submit fails the task (never sent again); a refused poll with retry true is polled again after the back-off, without it the task fails. Scope: answer, task (on submit: the task as created, without upstream_id).
   */
  failure?: unknown;
  submit: {
    /**
     * Operation (under `operations`) that creates the upstream task; called once, never retried blindly. The default when `choose` is absent or yields null.
     */
    operation: string;
    /**
     * Mapping to the name of the operation that creates this task (e.g. text or image to video), or null for `operation`; every literal name in it must be a declared operation. The choice is stored on the task as task.operation. Scope: as request.
     */
    choose?: unknown;
    headers?: ProtocolTasksHeaders;
    /**
     * Mapping to the submitted document. Scope: model (the upstream model id), body (the client's request fields, every known field present and null when not sent, so `body.size` never reads Liquid's key count; `input_reference` is a URL, or null when it travels as a file part), operation (the operation chosen).
     */
    request: unknown;
    /**
     * The reference image (input_reference) is read (at most 25 MiB) and given to the request mapping as body.input_reference = {base64, mime_type}, for a JSON API that takes the image's bytes inline (Veo's bytesBase64Encoded).
     */
    inline: boolean;
    /**
     * Multipart field the reference image (input_reference) travels in as a file part, for `encoding: multipart` operations; a JSON operation gets it as a URL in body.input_reference.
     */
    reference?: string;
    /**
     * Mapping to the upstream task id. Scope: answer (the submit answer).
     */
    id: unknown;
    /**
     * Mapping to an object of what later steps need from the submit answer (an absolute polling URL), stored on the task (at most 4 KiB as JSON) and read as task.saved. Scope: answer.
     */
    save?: unknown;
  };
  poll: {
    /**
     * Operation that reads the task; its path has `upstream_id` in scope. Its method and deadline also apply to a `url` poll.
     */
    operation: string;
    /**
     * Mapping to the name of the operation that reads the task (following the submit operation: task.operation), or null for `operation`. Scope: task.
     */
    choose?: unknown;
    /**
     * Mapping to an absolute URL to poll instead of the operation's path (e.g. task.saved.polling_url), or null for the operation's path. Only https (or the channel's own origin) on the channel's host or one of `hosts` is accepted; any other URL fails the task, nothing sent. Scope: task.
     */
    url?: unknown;
    /**
     * Hosts besides the channel's own that a `url` poll may go to, with the channel's credential: `api.example.com`, or `*.example.com` for any host under it (not the domain itself).
     */
    hosts?: string[];
    headers?: ProtocolTasksHeaders;
    /**
     * First poll after `firstSeconds`, then doubling up to `maxSeconds`. The gateway config's tasks.poll overrides both.
     */
    interval: {
      firstSeconds: number;
      maxSeconds: number;
    };
    /**
     * Mapping to the upstream's status word, or to a word of your own computed from the answer (`$if` on a done flag and an error object). Scope: answer (the status answer), task.
     */
    status: unknown;
    /**
     * Upstream status word to the gateway's; a word not listed is kept as in_progress and logged. Some word must map to completed and some to failed, or a task could never end.
     */
    statusMap: {
      [k: string]: 'queued' | 'in_progress' | 'completed' | 'failed';
    };
    /**
     * Mapping to the progress in percent (0 to 100), or null. Scope: answer, task.
     */
    progress?: unknown;
    /**
     * Mapping to {code, message} of a failed task. Scope: answer, task.
     */
    error?: unknown;
  };
  /**
   * Where a completed task's media is: a download (authenticated, streamed), a URL (fetched through the remote-fetch guard) or base64; one of the three is required. It is streamed into the file store up to tasks.archiveMaxBytes.
   */
  result: {
    /**
     * One more call once the task completed, whose JSON answer says where the result is (a file id looked up for its download URL). Its answer is `step` in the scope of url, base64, download.url and usage; the task's `failure` check applies to it; it is tried again like a download until the archive deadline.
     */
    step?: {
      /**
       * The operation to call; its path has `upstream_id` and every value of `params` in scope.
       */
      operation: string;
      /**
       * Mapping to an object of values for the operation's path (each URL-encoded). Scope: answer (the completed status answer), task.
       */
      params?: unknown;
      headers?: ProtocolTasksHeaders;
    };
    /**
     * An authenticated download: an operation answering the bytes, or an absolute URL. The channel's credential goes only to the channel's own origin; a URL on another host, or a redirect to one, is fetched through the remote-fetch guard without it.
     */
    download?: {
      /**
       * An operation answering the bytes (`response: binary`); its path has `upstream_id` in scope.
       */
      operation?: string;
      /**
       * Mapping to the absolute URL of the bytes (e.g. a file URI on the vendor's API host that needs the key). Scope: answer, step, task.
       */
      url?: unknown;
    };
    /**
     * Mapping to the result URL (also kept as provider_url when archiving fails). Scope: answer (the completed status answer), step (the result step's answer), task.
     */
    url?: unknown;
    /**
     * Mapping to the result as base64. Scope: answer, step, task.
     */
    base64?: unknown;
    /**
     * Mapping to what is billed: the count of the unit the task family bills (its catalogue entry's `pipeline.task.bill.unit`: {seconds} of video, {images}; a number or a numeric string; task.seconds is what the client asked for), or {tokens} priced at the model's outputPerMillion. Absent or null: the reservation is charged. Scope: answer, step, task.
     */
    usage?: unknown;
  };
}
/**
 * How an upstream API is spoken: its dialect, auth, operation paths and the mappings from client dialects.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "protocol".
 */
export interface ProtocolSchema {
  id: string;
  description?: string;
  /**
   * Id of a protocol this one is a variant of: its auth, headers, forwardHeaders, tokenizer, translations, evaluate and tasks sections and every operation are taken from it unless this file declares them (an operation this file declares replaces that operation's fields it names, keeping the rest). Its `batches` section is never taken: a vendor's batch API is its own. For an API that speaks another's dialect at other paths (Claude on Vertex AI and Anthropic's Messages).
   */
  extends?: string;
  /**
   * The wire dialect this protocol speaks; a client of the same dialect is passed through. A protocol that only runs tasks needs none: an operation without a dialect (its own or this) must be named by a task, a translation or the evaluate section.
   */
  dialect?: string;
  auth?: {
    header: string;
    /**
     * Liquid, with `credential` and `secret` (the channel's credential.env and credential.secretEnv) in scope; rendered for every request, so a filter such as `jwt_hs256` can sign a fresh token.
     */
    value: string;
  };
  headers?: {
    [k: string]: string;
  };
  /**
   * Client request headers (lower-case names) a pass-through forwards to this protocol's upstream when the client sends them, overriding the protocol's and the channel's `headers` of the same name (which stay the default). Only on pass-through routes (the client's dialect is the operation's); each value at most 1,024 characters, else 400.
   */
  forwardHeaders?: string[];
  /**
   * How `POST /v1/messages/count_tokens` counts locally for channels of this protocol that declare no `count_tokens` operation: the vendor's BPE encoding (gpt-tokenizer). The answer is marked `x-token-count: approximate`. Default: o200k_base.
   */
  tokenizer?: {
    encoding: 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base';
  };
  /**
   * Operation name to how it is called: method, path, body encoding, response kind, where its usage is and how an error body reads. Declared once here; translations and the evaluate section name them.
   */
  operations: {
    [k: string]: {
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      /**
       * Liquid, with `model` (the upstream model id) in scope; every value is URL-encoded.
       */
      path: string;
      /**
       * The client dialect passed through to this operation unchanged (model mapped); defaults to the protocol's dialect.
       */
      dialect?: string;
      /**
       * How the mapped request is sent: a JSON body, multipart/form-data (file parts from the inputs stage), or no body.
       */
      encoding: 'json' | 'multipart' | 'none';
      /**
       * What the upstream answers: a JSON document, server-sent events, a stream of events framed as `framing` says (`stream`), or bytes piped on.
       */
      response: 'json' | 'sse' | 'stream' | 'binary';
      /**
       * How a streamed answer (`response: stream`, or a json operation that streamFlag turns into a stream) is framed: server-sent events (`text/event-stream`), or AWS event-stream frames (`application/vnd.amazon.eventstream`: binary, both CRCs checked; an event frame is an event named by its `:event-type` whose data is its payload, an exception frame the upstream's error as `errors.exceptions` says). Mappings and usage read the events of either the same way.
       */
      framing: 'sse' | 'aws-eventstream';
      /**
       * A request field that, when true in the mapped request, makes a `json` operation answer server-sent events instead (chat's `stream`).
       */
      streamFlag?: string;
      /**
       * The operation a translated client that asks for a stream (its `stream: true`) is sent to instead of this one, with the same mapped request (Bedrock's ConverseStream beside Converse: another path, another framing, usage in its events).
       */
      streamOperation?: string;
      /**
       * The path (Liquid, as `path`) of a request whose `streamFlag` is true, for an API that streams at a path of its own (Vertex AI's `:streamRawPredict`); a query may follow it (`?alt=sse`).
       */
      streamPath?: string;
      /**
       * Top-level members of the JSON body the platform wants otherwise than the dialect's shape, changed after the request is mapped or passed through: for an API that takes the model in its path and a version in the body (Claude on Vertex AI). A client's own members are kept byte for byte; one removed here is one the platform does not take in the body, never one the client's request loses meaning without.
       */
      body?: {
        /**
         * Members set to these JSON values (added when absent).
         */
        set?: {
          [k: string]: unknown;
        };
        /**
         * Members removed.
         */
        remove?: string[];
      };
      /**
       * Overall deadline of one call, streams included; past it the call ends with 504. Defaults to the channel's timeouts.deadlineMs.
       */
      deadlineMs?: number;
      usage?: UsageSpec;
      /**
       * Media the answer carries, archived into the workspace file store before the answer is sent (the outputs stage); each archived item gains svc_file_id, svc_url and archive_status (archive_error when it failed).
       */
      outputs?: {
        answer?: AnswerMedia;
        /**
         * SSE event name to where media sit in that event's data.
         */
        events?: {
          [k: string]: EventMedia;
        };
      };
      /**
       * How an upstream error body is read.
       */
      errors?: {
        /**
         * Mapping to the error message (a string, or null). Scope: answer (the parsed error body). The gateway bounds and scrubs it before a client sees it.
         */
        message: unknown;
        /**
         * An exception frame's `:exception-type` to the HTTP status the API reference gives it (`throttlingException: 429`): the frame's payload is then read as an error body of that status, so it keeps its meaning in the client's dialect. A type not listed is a 502.
         */
        exceptions?: {
          [k: string]: number;
        };
      };
    };
  };
  /**
   * Client dialect to the mapping that turns its requests into this protocol's and back.
   */
  translations?: {
    [k: string]: TranslationSchema;
  };
  evaluate?: EvaluateSpec;
  tasks?: ProtocolTasks;
  batches?: BatchApiSpec;
}
/**
 * A list (or one item) of media in a JSON answer: `list` or `item` is its Liquid path (`"{{ answer.data }}"`); each item's `url` or `base64` (`"{{ item.b64_json }}"`) holds the media; `when` keeps only items whose fields equal these values.
 *
 * This interface was referenced by `ProtocolSchema`'s JSON-Schema
 * via the `definition` "answerMedia".
 */
export interface AnswerMedia {
  list?: string;
  item?: string;
  url?: string;
  base64?: string;
  when?: {
    [k: string]: string | number | boolean;
  };
  /**
   * The file purpose the archived media is stored under (`image_generation`, `video_generation`, or a family's own, as a catalogue task family's `purpose`).
   */
  purpose: string;
}
/**
 * A list (or one item) of media in an SSE event's parsed data: as answerMedia, with `list` or `item` a path from `event` (`"{{ event.item }}"`).
 *
 * This interface was referenced by `ProtocolSchema`'s JSON-Schema
 * via the `definition` "eventMedia".
 */
export interface EventMedia {
  list?: string;
  item?: string;
  url?: string;
  base64?: string;
  when?: {
    [k: string]: string | number | boolean;
  };
  /**
   * The file purpose the archived media is stored under (`image_generation`, `video_generation`, or a family's own, as a catalogue task family's `purpose`).
   */
  purpose: string;
}
/**
 * How one client dialect is spoken to this protocol: structural mappings (YAML trees with Liquid expressions at their leaves; docs/translation.md, Writing a mapping), a table of what happens to client fields, lookup maps, and the per-event mappings the generic SSE state machine runs.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "translation".
 */
export interface TranslationSchema {
  description?: string;
  /**
   * Protocol operation the translated request is sent to.
   */
  operation: string;
  /**
   * Translated answers and streams are named this prefix and the request id's key (`msg_` + `01J...`), the same in both modes. Without it a stream adopts the upstream's id.
   */
  idPrefix?: string;
  /**
   * Every top-level client field the route takes, and what happens to it: `map` (the request mapping carries it), `ignore` (left out: it cannot change the answer; `reason` says why) or `refuse` (400 naming the field, unless its value is null or one of `neutral`). A field the table does not list is refused (400 naming it), so nothing is dropped in silence; docs/translation.md lists them and test/translate-fields.test.ts checks the table against the official SDK's request type.
   */
  fields?: {
    [k: string]: {
      action: 'map' | 'ignore' | 'refuse';
      reason?: string;
      /**
       * refuse: values that change nothing (a penalty of 0) and are ignored.
       */
      neutral?: unknown[];
    };
  };
  /**
   * Lookup tables available to every template as `maps.<name>[key]` (stop reasons, tool choices).
   */
  maps?: {
    [k: string]: {
      [k: string]: unknown;
    };
  };
  /**
   * Mapping from the client body to the upstream body. Scope: body, model (upstream id), target (the model entry: what it accepts, e.g. target.reasoning, target.outputBound, target.thinking, target.prefill), maps.
   */
  request: unknown;
  /**
   * Mapping from the upstream answer to the client answer. Scope: body, request (the client body), target (the model entry), model (client id), usage (as the operation's usage mapping reads it), cost, now (unix seconds), id (request id), maps.
   */
  response: unknown;
  /**
   * Media in the translated answer (the client's dialect), archived into the workspace file store before it is sent, as an operation's `outputs` are on a pass-through: the OpenAI images dialect reads `{ answer: { list: "{{ answer.data }}", base64: "{{ item.b64_json }}" } }` from the answer a vendor's mapping made.
   */
  outputs?: {
    answer?: AnswerMedia;
  };
  /**
   * Required for the streaming client dialects (openai-chat, anthropic-messages, openai-responses); the OpenAI images dialect does not stream.
   */
  stream?: {
    /**
     * SSE event name (`message` when the upstream names none) to a mapping yielding a list of stream operations: start {id}, text {key, text}, refusal {key, text}, tool_start {key, id, name}, tool_args {key, json}, block_stop {key}, stop {reason, sequence}, done, error {type} (usage is read by the operation's `usage` block). Scope: event (parsed data), raw (data text), request (the client body), target (the model entry), maps. Events not listed are ignored.
     */
    decode: {
      [k: string]: unknown;
    };
    /**
     * Client-side operation to a mapping yielding a list of client events {event?, data}. Scope: op (finish: {reason, sequence, refused}), message {id, model, created}, usage, estimate {inputTokens} (counted locally for a translated Messages stream, else 0), cost, request (the client body), errors {openai, anthropic}, output (Responses clients: the finished items, each with its whole text or arguments; block_stop's op carries them too), maps.
     */
    encode: {
      start: unknown;
      block_start: unknown;
      delta: unknown;
      block_stop: unknown;
      finish: unknown;
      error: unknown;
    };
  };
}
/**
 * A public model id and the targets that serve it (docs/routing.md). A file holds one route or a list of them.
 *
 * This interface was referenced by `GatewayConfigSchema`'s JSON-Schema
 * via the `definition` "route".
 */
export interface RouteFile {
  [k: string]: unknown;
}
/**
 * This interface was referenced by `RouteFile`'s JSON-Schema
 * via the `definition` "route".
 */
export interface RouteRoute {
  /**
   * The model id clients send; listed by GET /v1/models. It must not be a model id or alias a channel serves.
   */
  id: string;
  description?: string;
  /**
   * Which target is tried first: `ordered` as listed; `weighted` in proportion to `weight` (smooth weighted round robin, exact over a cycle); `least-busy` the fewest requests in flight in this process; `latency` the lowest recent time to the answer's head (EWMA; for a stream, its first byte), every 8th request probing the target heard from least recently; `cost` the cheapest price first; `sticky` by consistent hashing of `stickyKey` (rendezvous, weighted), so one session keeps one target. The rest follow as failover, in the order the strategy ranks them.
   */
  strategy: 'ordered' | 'weighted' | 'least-busy' | 'latency' | 'cost' | 'sticky';
  /**
   * sticky only: what a request is hashed by: `key` (the API key), `user` (the body's `user`, or Messages' `metadata.user_id`), or `header:<name>` (a session id, say). A request without it is placed by weight.
   */
  stickyKey?: string;
  failover: {
    /**
     * What moves a request on to the next target: `connect` (nothing reached the upstream: refused, unreachable, an open circuit), `timeout` (no answer in the channel's timeouts: the upstream may have run the request, and may bill it), `429`, `5xx`, a status code, `content_filter` (a chat answer a content filter stopped: finish_reason content_filter, stop_reason refusal, a Responses answer incomplete for content_filter; not streamed answers), or an upstream error code or type (`context_length_exceeded`). A failure not listed is answered to the client.
     *
     * @minItems 1
     */
    on: (number | string)[];
    /**
     * Continue a text stream that breaks after its first byte (connection lost, an upstream error event, no byte for streamIdleMs) on the next target: the request is sent again with the text already streamed as a final assistant turn (a prefill where the target continues one, else followed by a continuation instruction), and its events are spliced into the same client stream (OpenAI chat, Anthropic Messages and Responses clients). Never for a stream with a tool call or structured output in progress. Each attempt is billed what it used (docs/routing.md, "Stream failover").
     */
    streamAfterFirstByte: boolean;
    /**
     * With streamAfterFirstByte: a stream that sends no byte for this long is broken, and continued on the next target.
     */
    streamIdleMs: number;
  };
  /**
   * Absent: no cooldown (the channel's circuit breaker still applies).
   */
  cooldown?: {
    /**
     * Failures (those `failover.on` moves on from, content filters aside, and streams broken after their first byte) within the window that cool a target.
     */
    failures: number;
    windowSeconds: number;
    /**
     * How long a cooled target is skipped (tried only when every other target of the request was skipped or failed).
     */
    seconds: number;
  };
  cache?: RouteRouteCache;
  /**
   * Ids of guardrails (guardrails/ files) every request to this route passes; workspaces and keys may add more, never remove these.
   */
  guardrails?: string[];
  /**
   * @minItems 1
   * @maxItems 64
   */
  targets: {
    /**
     * A model id or alias (every channel serving it, by priority), or `channel/model` (that channel only). A target names a model or a route, not both.
     */
    model?: string;
    /**
     * Another route's id.
     */
    route?: string;
    /**
     * Share of traffic under `weighted` and `sticky`.
     */
    weight: number;
  }[];
}
