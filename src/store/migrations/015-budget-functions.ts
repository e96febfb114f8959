// PostgreSQL only: reserve and settle with budget periods and caps per model, still one round trip each under the
// spend locks of migration 007, so replicas stay exact at a period boundary as anywhere else.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop function if exists spend_reserve(text, text, text, text, bigint, bigint, bigint)`.execute(db);
  await sql`drop function if exists spend_settle(text, jsonb)`.execute(db);
  // What one budget has spent in the period starting at p_start: its spend_periods row, started from the ledger when missing.
  await sql`
    create or replace function spend_period_spent(p_scope text, p_subject text, p_model text, p_period text, p_start bigint) returns bigint language plpgsql as $$
    declare
      spent_now bigint;
    begin
      if p_period = 'total' and p_model = '' then
        return coalesce((select t.spent_micros from spend_totals t where t.scope = p_scope and t.subject_id = p_subject), 0);
      end if;
      select p.spent_micros into spent_now from spend_periods p
        where p.scope = p_scope and p.subject_id = p_subject and p.model = p_model and p.period = p_period and p.period_start = p_start;
      if found then
        return spent_now;
      end if;
      if p_scope = 'key' then
        select coalesce(sum(l.cost_micros), 0) into spent_now from usage_ledger l
          where l.key_id = p_subject and (p_model = '' or l.model = p_model) and l.created_at >= p_start / 1000 - 3600 and coalesce(l.reserved_at, l.created_at * 1000) >= p_start;
      else
        select coalesce(sum(l.cost_micros), 0) into spent_now from usage_ledger l
          where l.workspace_id = p_subject and (p_model = '' or l.model = p_model) and l.created_at >= p_start / 1000 - 3600 and coalesce(l.reserved_at, l.created_at * 1000) >= p_start;
      end if;
      insert into spend_periods (scope, subject_id, model, period, period_start, spent_micros) values (p_scope, p_subject, p_model, p_period, p_start, spent_now)
        on conflict do nothing;
      return spent_now;
    end $$`.execute(db);
  await sql`
    create or replace function spend_reserve(p_id text, p_key text, p_workspace text, p_request text, p_model text, p_amount bigint, p_now bigint, p_expires bigint,
      p_daily bigint, p_weekly bigint, p_monthly bigint)
    returns table (ok boolean, scope text, model text, period text, cap bigint, spent bigint, reserved bigint) language plpgsql as $$
    declare
      b record;
      v_start bigint;
      spent_now bigint;
      reserved_now bigint;
    begin
      perform spend_lock(p_key, p_workspace);
      -- Each statement below sees every reserve and settle committed before the locks were granted.
      for b in
        select 'key'::text as scope, p_key as subject, ''::text as model, k.spend_cap_period as period, k.spend_cap_micros as cap, 0 as rank
          from api_keys k where k.id = p_key and k.spend_cap_micros is not null
        union all
        select 'key', p_key, c.model, c.period, c.cap_micros, 1 from spend_model_caps c where c.scope = 'key' and c.subject_id = p_key and c.model = p_model
        union all
        select 'workspace', p_workspace, '', w.spend_cap_period, w.spend_cap_micros, 2 from workspaces w where w.id = p_workspace and w.spend_cap_micros is not null
        union all
        select 'workspace', p_workspace, c.model, c.period, c.cap_micros, 3 from spend_model_caps c where c.scope = 'workspace' and c.subject_id = p_workspace and c.model = p_model
        order by rank
      loop
        v_start := case b.period when 'daily' then p_daily when 'weekly' then p_weekly when 'monthly' then p_monthly else 0 end;
        spent_now := spend_period_spent(b.scope, b.subject, b.model, b.period, v_start);
        -- Only reservations made in this period count against it.
        if b.scope = 'key' then
          select coalesce(sum(r.amount_micros), 0) into reserved_now from spend_reservations r
            where r.key_id = p_key and r.expires_at > p_now and r.created_at >= v_start and (b.model = '' or r.model = b.model);
        else
          select coalesce(sum(r.amount_micros), 0) into reserved_now from spend_reservations r
            where r.workspace_id = p_workspace and r.expires_at > p_now and r.created_at >= v_start and (b.model = '' or r.model = b.model);
        end if;
        if spent_now + reserved_now + p_amount > b.cap then
          return query select false, b.scope, b.model, b.period, b.cap, spent_now, reserved_now;
          return;
        end if;
      end loop;
      insert into spend_reservations (id, key_id, workspace_id, request_id, amount_micros, expires_at, created_at, model)
        values (p_id, p_key, p_workspace, p_request, p_amount, p_expires, p_now, p_model);
      return query select true, null::text, null::text, null::text, null::bigint, null::bigint, null::bigint;
    end $$`.execute(db);
  // p_daily, p_weekly, p_monthly: where the periods of the reservation's instant began; the cost counts there.
  await sql`
    create or replace function spend_settle(p_reservation text, p_entry jsonb, p_daily bigint, p_weekly bigint, p_monthly bigint) returns boolean language plpgsql as $$
    declare
      inserted integer;
      cost bigint := (p_entry->>'cost_micros')::bigint;
      p_key text := p_entry->>'key_id';
      p_workspace text := p_entry->>'workspace_id';
    begin
      perform spend_lock(p_key, p_workspace);
      delete from spend_reservations where id = p_reservation;
      insert into usage_ledger (request_id, workspace_id, key_id, model, channel, kind, input_tokens, output_tokens, cached_input_tokens, units, cost_micros, overage_micros, currency, price, created_at, reserved_at, reservation_id)
        select e.request_id, e.workspace_id, e.key_id, e.model, e.channel, e.kind, e.input_tokens, e.output_tokens, e.cached_input_tokens, e.units, e.cost_micros, e.overage_micros, e.currency, e.price, e.created_at, e.reserved_at, p_reservation
        from jsonb_to_record(p_entry) as e (request_id text, workspace_id text, key_id text, model text, channel text, kind text, input_tokens bigint, output_tokens bigint, cached_input_tokens bigint, units bigint, cost_micros bigint, overage_micros bigint, currency text, price text, created_at bigint, reserved_at bigint)
        on conflict (reservation_id) where reservation_id is not null do nothing;
      get diagnostics inserted = row_count;
      if inserted = 0 then
        return false;
      end if;
      if cost > 0 then
        insert into spend_totals (scope, subject_id, spent_micros) values ('key', p_key, cost), ('workspace', p_workspace, cost)
          on conflict (scope, subject_id) do update set spent_micros = spend_totals.spent_micros + excluded.spent_micros;
        update spend_periods set spent_micros = spent_micros + cost
          where ((scope = 'key' and subject_id = p_key) or (scope = 'workspace' and subject_id = p_workspace)) and model in ('', p_entry->>'model')
            and ((period = 'total' and period_start = 0) or (period = 'daily' and period_start = p_daily) or (period = 'weekly' and period_start = p_weekly) or (period = 'monthly' and period_start = p_monthly));
      end if;
      return true;
    end $$`.execute(db);
}
