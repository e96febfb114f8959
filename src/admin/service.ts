// The admin service: workspaces, keys, model caps, users and roles, usage and the audit log, for the REST API
// (/admin/v1), the CLI and the dashboard alike. Every change runs in one transaction together with its audit row: both
// land or neither. Each resource lives in its own file (workspaces-service.ts, keys-service.ts, ...) as functions of an
// AdminScope (scope.ts: who calls and what they reach); this class gathers them under one name for the callers.
import type { UsageRange } from '../billing/usage-report.js';
import type { BudgetPeriod } from '../config/periods.js';
import type { BudgetScope } from '../store/budgets.js';
import * as auditLog from './audit-service.js';
import * as keys from './keys-service.js';
import * as members from './members-service.js';
import * as modelCaps from './model-caps-service.js';
import * as mcpGrants from './mcp-grants-service.js';
import * as guardrails from './guardrails-service.js';
import * as cacheSettings from './cache-settings-service.js';
import type { CacheSettings } from '../config/cache.js';
import type { McpGrantInput } from './mcp-grants-service.js';
import type { McpGrantScope, StoredMcpGrant } from '../store/mcp-grants.js';
import { AdminScope } from './scope.js';
import type { AuditView, KeyInput, KeyView, MemberView, ModelCapInput, ModelCapView, WorkspaceView } from './views.js';
import * as workspaces from './workspaces-service.js';
import type { RequestLogView } from '../request-logs/views.js';
import type { RequestLogQuery } from './request-log-query.js';

export type { Actor } from '../store/audit.js';
export { ForbiddenError, type AdminStore, type Reach } from './scope.js';
export { MAX_CAP_USD, capMicros, type AuditView, type KeyInput, type KeyView, type MemberView, type ModelCapInput, type ModelCapView, type WorkspaceView } from './views.js';

export class AdminService extends AdminScope {
  // ---- workspaces

  listWorkspaces(): Promise<WorkspaceView[]> {
    return workspaces.listWorkspaces(this);
  }

  getWorkspace(id: string): Promise<WorkspaceView> {
    return workspaces.getWorkspace(this, id);
  }

  createWorkspace(input: { name: string; spend_cap?: number | null; spend_cap_period?: BudgetPeriod }): Promise<WorkspaceView> {
    return workspaces.createWorkspace(this, input);
  }

  updateWorkspace(id: string, input: { spend_cap?: number | null; spend_cap_period?: BudgetPeriod }): Promise<WorkspaceView> {
    return workspaces.updateWorkspace(this, id, input);
  }

  // ---- keys

  listKeys(workspaceId: string): Promise<KeyView[]> {
    return keys.listKeys(this, workspaceId);
  }

  getKey(id: string): Promise<KeyView> {
    return keys.getKey(this, id);
  }

  /** Creates a key; the answer holds the key itself, which is never shown again. */
  createKey(workspaceId: string, input: KeyInput, now?: number): Promise<KeyView & { key: string }> {
    return keys.createKey(this, workspaceId, input, now);
  }

  /** Changes a key's cap, scopes, expiry or name; fields left out stay as they are. */
  updateKey(id: string, input: KeyInput, now?: number): Promise<KeyView> {
    return keys.updateKey(this, id, input, now);
  }

  /** Revokes a key; revoking one already revoked changes nothing and writes no row. */
  revokeKey(id: string, now?: number): Promise<KeyView> {
    return keys.revokeKey(this, id, now);
  }

  // ---- caps on one model

  listModelCaps(scope: BudgetScope, id: string): Promise<ModelCapView[]> {
    return modelCaps.listModelCaps(this, scope, id);
  }

  /** Sets a key's or a workspace's cap on one model; spend_cap null removes it. */
  setModelCap(scope: BudgetScope, id: string, input: ModelCapInput): Promise<ModelCapView> {
    return modelCaps.setModelCap(this, scope, id, input);
  }

  // ---- MCP tool grants

  listMcpGrants(scope: McpGrantScope, id: string): Promise<StoredMcpGrant[]> {
    return mcpGrants.listMcpGrants(this, scope, id);
  }

  /** Sets a workspace's or a key's tools on one MCP server; tools null removes the grant. */
  setMcpGrant(scope: McpGrantScope, id: string, input: McpGrantInput) {
    return mcpGrants.setMcpGrant(this, scope, id, input);
  }

  // ---- guardrails workspaces and keys add

  getGuardrails(scope: guardrails.GuardrailScope, id: string): Promise<guardrails.GuardrailsView> {
    return guardrails.getGuardrails(this, scope, id);
  }

  setGuardrails(scope: guardrails.GuardrailScope, id: string, ids: string[]): Promise<guardrails.GuardrailsView> {
    return guardrails.setGuardrails(this, scope, id, ids);
  }

  // ---- how workspaces and keys narrow the response cache

  getCacheSettings(scope: cacheSettings.CacheSettingsScope, id: string): Promise<CacheSettings> {
    return cacheSettings.getCacheSettings(this, scope, id);
  }

  setCacheSettings(scope: cacheSettings.CacheSettingsScope, id: string, input: Partial<CacheSettings>): Promise<CacheSettings> {
    return cacheSettings.setCacheSettings(this, scope, id, input);
  }

  // ---- users and roles

  listMembers(workspaceId: string): Promise<MemberView[]> {
    return members.listMembers(this, workspaceId);
  }

  /** Gives a user (created when new) a role; `created` says whether the account is new. */
  setRole(workspaceId: string, input: { email: string; role: string }, now?: number): Promise<MemberView & { created: boolean }> {
    return members.setRole(this, workspaceId, input, now);
  }

  /** Takes a user out of a workspace; the last owner stays. */
  removeMember(workspaceId: string, userId: string, now?: number): Promise<void> {
    return members.removeMember(this, workspaceId, userId, now);
  }

  // ---- usage and audit

  usage(workspaceId: string, range: UsageRange) {
    return auditLog.usage(this, workspaceId, range);
  }

  /** A workspace's request log, newest first, filtered, a page at a time. */
  requests(workspaceId: string, query: RequestLogQuery): Promise<{ data: RequestLogView[]; next_cursor: string | null }> {
    return auditLog.requests(this, workspaceId, query);
  }

  requestsCsv(workspaceId: string, query: RequestLogQuery): Promise<AsyncGenerator<string>> {
    return auditLog.requestsCsv(this, workspaceId, query);
  }

  audit(query: auditLog.AuditQuery): Promise<{ data: AuditView[]; has_more: boolean }> {
    return auditLog.audit(this, query);
  }

  /** Records a change made elsewhere (a config reload, a file deleted from the dashboard) in its own row. */
  record(action: string, workspaceId: string | null, targetId: string | null, before?: unknown, after?: unknown): Promise<void> {
    return auditLog.record(this, action, workspaceId, targetId, before, after);
  }
}
