// Table types for kysely. Each capability adds its tables here and a migration file beside it.
import type { ColumnType, Generated } from 'kysely';
import type { BudgetPeriod } from '../config/periods.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './webhook-tables.js';
import type { RequestLogCountsTable, RequestLogsTable } from './request-log-table.js';
import type { McpGrantsTable } from './mcp-grant-table.js';
import type { BatchesTable, BatchLinesTable } from './batch-tables.js';

export type { BatchesTable, BatchLinesTable, BatchLineStatus, BatchStatus, VendorStep } from './batch-tables.js';

export interface WorkspacesTable {
  id: string;
  name: string;
  spend_cap_micros: number | null;
  /** The period the cap counts over: 'total', 'daily', 'weekly' or 'monthly'. */
  spend_cap_period: BudgetPeriod;
  created_at: number;
  /** JSON array of the guardrail ids the workspace adds to the operator's (docs/guardrails.md); null when none. */
  guardrails?: string | null;
  /** JSON of how the workspace narrows the response cache (src/cache/limits.ts); null when it does not. */
  cache?: string | null;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string | null;
  prefix: string;
  hash: string;
  /** JSON array of scopes; empty means all scopes. */
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  spend_cap_micros: number | null;
  /** The period the cap counts over: 'total', 'daily', 'weekly' or 'monthly'. */
  spend_cap_period: BudgetPeriod;
  created_at: number;
  /** JSON array of the guardrail ids the key adds to its workspace's and the operator's; null when none. */
  guardrails?: string | null;
  /** JSON of how the key narrows the response cache further than its workspace (src/cache/limits.ts); null when it does not. */
  cache?: string | null;
}

export interface UsageLedgerTable {
  id: Generated<number>;
  request_id: string;
  workspace_id: string;
  key_id: string;
  model: string;
  channel: string;
  kind: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  units: number;
  cost_micros: number;
  currency: string;
  /** JSON of the price that produced the cost. */
  price: string;
  created_at: number;
  /** The spend reservation this row billed; unique, so a charge counts once. */
  reservation_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the reported usage cost beyond the reservation: charged (it is part of cost_micros) and recorded here. */
  overage_micros: ColumnType<number, number | undefined, number>;
  /** Unix milliseconds of the reservation this row billed: the budget period it counts in. Null on rows from before periods. */
  reserved_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface SettingsTable {
  name: string;
  value: string;
}

/** Budget held for a request in flight; swept once expired so a crash never strands it. */
export interface SpendReservationsTable {
  id: string;
  key_id: string;
  workspace_id: string;
  request_id: string;
  amount_micros: number;
  /** Unix milliseconds. */
  expires_at: number;
  /** Unix milliseconds: the budget period the reservation belongs to. */
  created_at: number;
  /** The model requested, for caps on one model. */
  model: ColumnType<string, string | undefined, string>;
}

/** A cap on one model's spend by a key or a workspace. */
export interface SpendModelCapsTable {
  scope: 'key' | 'workspace';
  subject_id: string;
  model: string;
  cap_micros: number;
  period: BudgetPeriod;
}

/** What a capped key or workspace spent in one period; model '' means all models. */
export interface SpendPeriodsTable {
  scope: 'key' | 'workspace';
  subject_id: string;
  model: string;
  period: BudgetPeriod;
  /** Unix milliseconds; 0 for 'total'. */
  period_start: number;
  spent_micros: number;
}

/** What a key or workspace has been charged in total, kept beside the ledger. */
export interface SpendTotalsTable {
  scope: 'key' | 'workspace';
  subject_id: string;
  spent_micros: number;
}

export interface FilesTable {
  /** "file_" + creation time + counter + random, so ids sort in creation order. */
  id: string;
  workspace_id: string;
  /** The client's name for it; a label only. */
  filename: string;
  purpose: string;
  /** Sniffed from the bytes, never taken from the client. */
  content_type: string;
  bytes: number;
  source: 'upload' | 'generated';
  blob_key: string;
  created_at: number;
  expires_at: number;
  /** The model that generated it (generated files only). */
  model: string | null;
  /** The request that generated it. */
  request_id: string | null;
  /** The asynchronous task that generated it, if one did. */
  task_id: string | null;
}

export type Role = 'owner' | 'admin' | 'member';

/** A dashboard account. */
export interface UsersTable {
  id: string;
  email: string;
  /** scrypt hash (see src/dashboard/passwords.ts); null until set through a one-time link. */
  password_hash: string | null;
  created_at: number;
}

/** A user's role in one workspace. */
export interface MembershipsTable {
  user_id: string;
  workspace_id: string;
  role: Role;
  created_at: number;
}

/** A signed-in browser; the cookie carries the id, the table its SHA-256, so sign-out ends it everywhere. */
export interface UserSessionsTable {
  id_hash: string;
  user_id: string;
  created_at: number;
  /** Unix seconds. */
  expires_at: number;
}

/** A one-time link that sets a user's password, or signs a new user up into a workspace. */
export interface PasswordLinksTable {
  token_hash: string;
  user_id: string | null;
  workspace_id: string | null;
  role: Role | null;
  created_at: number;
  expires_at: number;
}

/** Failed sign-ins per email and per client address, counted over a window. */
export interface SignInFailuresTable {
  subject: string;
  failures: number;
  window_started_at: number;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  usage_ledger: UsageLedgerTable;
  settings: SettingsTable;
  spend_reservations: SpendReservationsTable;
  spend_totals: SpendTotalsTable;
  spend_model_caps: SpendModelCapsTable;
  spend_periods: SpendPeriodsTable;
  files: FilesTable;
  leases: LeasesTable;
  users: UsersTable;
  memberships: MembershipsTable;
  user_sessions: UserSessionsTable;
  password_links: PasswordLinksTable;
  sign_in_failures: SignInFailuresTable;
  tasks: TasksTable;
  provider_ids: ProviderIdsTable;
  audit_log: AuditLogTable;
  sso_logins: SsoLoginsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  request_logs: RequestLogsTable;
  request_log_counts: RequestLogCountsTable;
  mcp_grants: McpGrantsTable;
  batches: BatchesTable;
  batch_lines: BatchLinesTable;
}

export interface ProviderIdsTable {
  kind: string;
  provider_id: string;
  workspace_id: string;
  created_at: number;
  /** An output item's JSON (kind "item", migration 018); null for the other kinds. */
  data: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A single sign-on started and not yet finished (migration 014). */
export interface SsoLoginsTable {
  state_hash: string;
  browser_hash: string;
  code_verifier: string;
  nonce: string;
  expires_at: number;
}

/** Who made a change: a dashboard user, an admin token, the CLI, or the gateway itself (a receiver's 410 disabling an endpoint). */
export type AuditActorKind = 'user' | 'admin_token' | 'cli' | 'gateway';

/** One admin change; append-only (see migration 012). */
export interface AuditLogTable {
  id: string;
  /** Unix milliseconds. */
  at: number;
  actor_kind: AuditActorKind;
  actor_id: string;
  action: string;
  workspace_id: string | null;
  target_id: string | null;
  /** JSON of the record before the change (secrets never), or null. */
  before: string | null;
  after: string | null;
  address: string | null;
}

export interface LeasesTable {
  name: string;
  /** The process holding it (services.instanceId). */
  owner: string;
  /** Unix milliseconds. */
  until: number;
}

export type TaskStatus = 'submitting' | 'queued' | 'in_progress' | 'completed' | 'failed';

/** An asynchronous task (a video, a model-family image): its upstream id, its charge and who polls it until when. */
export interface TasksTable {
  /** "video_..." or "task_...", sorting in creation order. */
  id: string;
  workspace_id: string;
  key_id: string;
  /** The wire object: "video.task" or "image.task". */
  object: string;
  /** The protocol's task name (tasks.<name>). */
  task: string;
  model: string;
  channel: string;
  status: TaskStatus;
  progress: number | null;
  /** JSON of the client's request fields (prompt, seconds, size, ...), bounded by the route's body limit. */
  params: string;
  upstream_id: string | null;
  /** JSON of the ChargeRef reserved at creation, settled or released by whichever process finishes the task. */
  charge: string;
  file_id: string | null;
  /** `expired`: the archived file expired and was swept (a deleted file's row is simply gone). */
  archive_status: 'archived' | 'failed' | 'expired' | 'deleted' | null;
  provider_url: string | null;
  error_code: string | null;
  error_message: string | null;
  cost_micros: number | null;
  /** Unix seconds. */
  created_at: number;
  completed_at: number | null;
  /** Unix milliseconds: past it the task fails. */
  deadline_at: number;
  next_poll_at: number;
  poll_attempts: number;
  not_found_count: number;
  lease_owner: string | null;
  /** Unix milliseconds; 0 when nobody holds it. */
  lease_until: number;
}
