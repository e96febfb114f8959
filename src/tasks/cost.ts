// What a task costs: the count of its family's billed unit (bill.unit) at the model's price for one (bill.price), plus
// any per-request price; the estimate is the same sum at the count the family reserves (bill.reserve). All of it is
// the catalogue's data: no family is named here.
import { sizedPriceMicros } from '../billing/image-price.js';
import { unitMicros } from '../billing/units.js';
import { declaredLimit } from '../config/price-units.js';
import type { ModelRoute, PriceConfig } from '../config/types.js';
import type { TaskBill } from './family.js';

export interface TaskParams {
  prompt: string;
  seconds?: number;
  size?: string;
  /** The submit operation `submit.choose` picked (absent: the task's `submit.operation`). */
  operation?: string;
  /** What `submit.save` kept from the submit answer. */
  saved?: Record<string, unknown>;
}

/** What a task is billed by: the family's unit, or tokens (priced at the model's outputPerMillion). */
export interface TaskUnits {
  count: number;
  unit: string;
}

const perRequestMicros = (route: ModelRoute) => Math.round((route.model.price.perRequest ?? 0) * 1e6);

/** The model's price for one unit of the bill, as declared (undefined when it declares none). */
function unitPrice(price: PriceConfig, bill: TaskBill): unknown {
  return bill.price === 'units' ? price.units?.[bill.unit] : (price as unknown as Record<string, unknown>)[bill.price];
}

/** Micro-units one unit costs: a number, a map priced by the size asked for (else its priciest), or a unit of price.units. */
function unitPriceMicros(route: ModelRoute, bill: TaskBill, size?: string): number {
  const price = unitPrice(route.model.price, bill);
  if (bill.price === 'units') return price ? unitMicros(price as NonNullable<PriceConfig['units']>[string]) : 0;
  if (typeof price === 'number') return Math.round(price * 1e6);
  return price && typeof price === 'object' ? sizedPriceMicros(price as Record<string, number>, size) : 0;
}

/** The most units one task may use on `route`: the reserve without its request field (the model's limit, else the default). */
export function mostUnitsOf(route: ModelRoute, bill: TaskBill): number {
  const reserve = bill.reserve;
  if (typeof reserve === 'number') return reserve;
  return (reserve.limit === undefined ? undefined : declaredLimit(route.model, reserve.limit)) ?? reserve.default ?? 1;
}

/** The units a task reserves: the request's field when it names a number, else the most. */
export function reservedUnitsOf(route: ModelRoute, bill: TaskBill, fields: Record<string, unknown>): number {
  const field = typeof bill.reserve === 'number' ? undefined : bill.reserve.field;
  const asked = field === undefined || fields[field] === undefined || fields[field] === null ? NaN : Number(fields[field]);
  return Number.isFinite(asked) && asked >= 0 ? asked : mostUnitsOf(route, bill);
}

/** The cost of `units` (the bill's unit, or tokens) on `route`. */
export function taskCostMicros(route: ModelRoute, bill: TaskBill, units: TaskUnits, size?: string): number {
  if (units.unit === 'tokens') return Math.round(units.count * (route.model.price.outputPerMillion ?? 0)) + perRequestMicros(route);
  return Math.round(units.count * unitPriceMicros(route, bill, size)) + perRequestMicros(route);
}

/** Whether a model without a price for the bill's unit is priced by the tokens it reports (outputPerMillion). */
export const billedByTokens = (route: ModelRoute, bill: TaskBill) => unitPrice(route.model.price, bill) === undefined && route.model.price.outputPerMillion !== undefined;

/**
 * The worst case: the units reserved (the count asked for, else the model's most) at the size asked for (else the
 * priciest). A model priced by tokens instead (outputPerMillion, no price for the unit) reserves its limits.maxOutputTokens.
 */
export function taskEstimateMicros(route: ModelRoute, bill: TaskBill, reserved: number, size?: string): number {
  if (billedByTokens(route, bill)) return taskCostMicros(route, bill, { count: route.model.limits?.maxOutputTokens ?? 0, unit: 'tokens' });
  return taskCostMicros(route, bill, { count: reserved, unit: bill.unit }, size);
}

const countOf = (value: unknown): number | undefined => {
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined;
};

/** Billable units from the mapped usage ({tokens}, else the bill's unit; a number or a numeric string); undefined when none is usable. */
export function unitsOf(bill: TaskBill, usage: unknown): TaskUnits | undefined {
  const said = usage as Record<string, unknown> | null | undefined;
  const tokens = countOf(said?.tokens);
  if (tokens !== undefined) return { count: tokens, unit: 'tokens' };
  const count = countOf(said?.[bill.unit]);
  return count === undefined ? undefined : { count, unit: bill.unit };
}
