// PostgreSQL only: a reservation in one round trip (the check for caps moves into the database) and settlements in
// batches (one statement settles several, taking every spend lock it needs up front, in one order).
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  // An uncapped key in an uncapped workspace (no cap on all models or on one) is admitted without a lock or a row.
  await sql`
    create or replace function spend_admit(p_id text, p_key text, p_workspace text, p_request text, p_model text, p_amount bigint, p_now bigint, p_expires bigint,
      p_daily bigint, p_weekly bigint, p_monthly bigint)
    returns table (ok boolean, held boolean, scope text, model text, period text, cap bigint, spent bigint, reserved bigint) language plpgsql as $$
    declare
      capped boolean;
    begin
      select k.spend_cap_micros is not null or w.spend_cap_micros is not null
          or exists (select 1 from spend_model_caps c where (c.scope = 'key' and c.subject_id = k.id) or (c.scope = 'workspace' and c.subject_id = w.id))
        into capped
        from api_keys k join workspaces w on w.id = k.workspace_id where k.id = p_key;
      if capped is not true then
        return query select true, false, null::text, null::text, null::text, null::bigint, null::bigint, null::bigint;
        return;
      end if;
      return query select r.ok, r.ok, r.scope, r.model, r.period, r.cap, r.spent, r.reserved
        from spend_reserve(p_id, p_key, p_workspace, p_request, p_model, p_amount, p_now, p_expires, p_daily, p_weekly, p_monthly) r;
    end $$`.execute(db);
  // p_items: [{id, entry, daily, weekly, monthly}], settled in order. The locks of every key, then of every workspace,
  // are taken first, each group sorted, so two batches (or a batch and a reserve, key then workspace) never wait on each
  // other in a circle; spend_settle's own locks are then already held.
  await sql`
    create or replace function spend_settle_batch(p_items jsonb) returns table (id text, settled boolean) language plpgsql as $$
    declare
      lock_key bigint;
    begin
      perform set_config('synchronous_commit', 'off', true);
      for lock_key in
        select distinct hashtextextended('spend:key:' || (i->'entry'->>'key_id'), 0) as h from jsonb_array_elements(p_items) i order by h
      loop
        perform pg_advisory_xact_lock(lock_key);
      end loop;
      for lock_key in
        select distinct hashtextextended('spend:workspace:' || (i->'entry'->>'workspace_id'), 0) as h from jsonb_array_elements(p_items) i order by h
      loop
        perform pg_advisory_xact_lock(lock_key);
      end loop;
      return query select i.item->>'id', spend_settle(i.item->>'id', i.item->'entry', (i.item->>'daily')::bigint, (i.item->>'weekly')::bigint, (i.item->>'monthly')::bigint)
        from jsonb_array_elements(p_items) with ordinality as i(item, n) order by i.n;
    end $$`.execute(db);
}
