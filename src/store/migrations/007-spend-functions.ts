// PostgreSQL only: reserve and settle as server-side functions, so each is one round trip that takes the spend locks
// and then reads, in a snapshot taken after them, what the previous holder committed.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    create or replace function spend_lock(p_key text, p_workspace text) returns void language plpgsql as $$
    begin
      -- Commits of these short transactions need not wait for a disk flush: a database crash may lose the last
      -- moments of settles (under-charging), never admit a request past a cap.
      perform set_config('synchronous_commit', 'off', true);
      perform pg_advisory_xact_lock(hashtextextended('spend:key:' || p_key, 0));
      perform pg_advisory_xact_lock(hashtextextended('spend:workspace:' || p_workspace, 0));
    end $$`.execute(db);
  await sql`
    create or replace function spend_reserve(p_id text, p_key text, p_workspace text, p_request text, p_amount bigint, p_now bigint, p_expires bigint)
    returns table (ok boolean, scope text, cap bigint, spent bigint, reserved bigint) language plpgsql as $$
    declare
      key_cap bigint;
      workspace_cap bigint;
      spent_now bigint;
      reserved_now bigint;
    begin
      perform spend_lock(p_key, p_workspace);
      -- Each statement below sees every reserve and settle committed before the locks were granted.
      select k.spend_cap_micros, w.spend_cap_micros into key_cap, workspace_cap from api_keys k join workspaces w on w.id = k.workspace_id where k.id = p_key;
      if key_cap is not null then
        select coalesce((select t.spent_micros from spend_totals t where t.scope = 'key' and t.subject_id = p_key), 0) into spent_now;
        select coalesce(sum(r.amount_micros), 0) into reserved_now from spend_reservations r where r.key_id = p_key and r.expires_at > p_now;
        if spent_now + reserved_now + p_amount > key_cap then
          return query select false, 'key'::text, key_cap, spent_now, reserved_now;
          return;
        end if;
      end if;
      if workspace_cap is not null then
        select coalesce((select t.spent_micros from spend_totals t where t.scope = 'workspace' and t.subject_id = p_workspace), 0) into spent_now;
        select coalesce(sum(r.amount_micros), 0) into reserved_now from spend_reservations r where r.workspace_id = p_workspace and r.expires_at > p_now;
        if spent_now + reserved_now + p_amount > workspace_cap then
          return query select false, 'workspace'::text, workspace_cap, spent_now, reserved_now;
          return;
        end if;
      end if;
      insert into spend_reservations (id, key_id, workspace_id, request_id, amount_micros, expires_at, created_at) values (p_id, p_key, p_workspace, p_request, p_amount, p_expires, p_now);
      return query select true, null::text, null::bigint, null::bigint, null::bigint;
    end $$`.execute(db);
  await sql`
    create or replace function spend_settle(p_reservation text, p_entry jsonb) returns boolean language plpgsql as $$
    declare
      inserted integer;
      cost bigint := (p_entry->>'cost_micros')::bigint;
    begin
      perform spend_lock(p_entry->>'key_id', p_entry->>'workspace_id');
      delete from spend_reservations where id = p_reservation;
      insert into usage_ledger (request_id, workspace_id, key_id, model, channel, kind, input_tokens, output_tokens, cached_input_tokens, units, cost_micros, overage_micros, currency, price, created_at, reservation_id)
        select e.request_id, e.workspace_id, e.key_id, e.model, e.channel, e.kind, e.input_tokens, e.output_tokens, e.cached_input_tokens, e.units, e.cost_micros, e.overage_micros, e.currency, e.price, e.created_at, p_reservation
        from jsonb_to_record(p_entry) as e (request_id text, workspace_id text, key_id text, model text, channel text, kind text, input_tokens bigint, output_tokens bigint, cached_input_tokens bigint, units bigint, cost_micros bigint, overage_micros bigint, currency text, price text, created_at bigint)
        on conflict (reservation_id) where reservation_id is not null do nothing;
      get diagnostics inserted = row_count;
      if inserted = 0 then
        return false;
      end if;
      if cost > 0 then
        insert into spend_totals (scope, subject_id, spent_micros) values ('key', p_entry->>'key_id', cost), ('workspace', p_entry->>'workspace_id', cost)
          on conflict (scope, subject_id) do update set spent_micros = spend_totals.spent_micros + excluded.spent_micros;
      end if;
      return true;
    end $$`.execute(db);
}
