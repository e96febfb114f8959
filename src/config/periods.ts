// Budget periods on the calendar: where the day, ISO week (from Monday) and month of an instant begin and end, in one IANA time zone.
import { ValidationError } from '../base/errors.js';

export const BUDGET_PERIODS = ['total', 'daily', 'weekly', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export function isBudgetPeriod(value: unknown): value is BudgetPeriod {
  return typeof value === 'string' && (BUDGET_PERIODS as readonly string[]).includes(value);
}

/** A period named by an operator (CLI flag, form field, API body): one of BUDGET_PERIODS, else a typed 400. */
export function parseBudgetPeriod(value: unknown, param = 'period'): BudgetPeriod {
  if (value === undefined || value === null || value === '') return 'total';
  if (!isBudgetPeriod(value)) throw new ValidationError(`${param} must be one of ${BUDGET_PERIODS.join(', ')}`, param);
  return value;
}

/** Where the current day, week and month began (Unix milliseconds), valid for instants in [from, until). */
export interface PeriodStarts {
  readonly daily: number;
  readonly weekly: number;
  readonly monthly: number;
  readonly from: number;
  readonly until: number;
}

/** A wall-clock date in the calendar's zone, months 1-12. */
interface WallDate {
  year: number;
  month: number;
  day: number;
}

const DAY_MS = 86_400_000;

/** Spend kept per period outlives the longest period (a month, a daylight-saving hour included); older rows are swept. */
export const PERIOD_ROWS_KEPT_MS = 35 * DAY_MS;

/**
 * Whether Intl knows a time zone by this name. UTC (the default) is known without asking: Intl's first use pages in
 * about 4.6 MiB of the node binary's ICU data, which a gateway on UTC (BudgetCalendar needs no Intl for it) never uses.
 */
export function isTimeZone(name: string): boolean {
  if (name === 'UTC' || name === 'Etc/UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Period boundaries in one time zone. Starts are computed once per day and kept, so a capped request pays no date
 * arithmetic until the next midnight. A local midnight that a daylight-saving jump skips begins at the first instant after it.
 */
export class BudgetCalendar {
  private readonly utc: boolean;
  private readonly format: Intl.DateTimeFormat | undefined;
  private cached: PeriodStarts = { daily: 0, weekly: 0, monthly: 0, from: 0, until: 0 };

  constructor(readonly timeZone = 'UTC') {
    this.utc = timeZone === 'UTC' || timeZone === 'Etc/UTC';
    this.format = this.utc
      ? undefined
      : new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  }

  /** The starts of the day, week and month `at` falls in. */
  starts(at: number): PeriodStarts {
    const cached = this.cached;
    if (at >= cached.from && at < cached.until) return cached;
    const date = this.wallDate(at);
    const daily = this.midnight(date);
    const next = this.midnight(addDays(date, 1));
    const starts = { daily, weekly: this.midnight(addDays(date, -weekdayFromMonday(date))), monthly: this.midnight({ ...date, day: 1 }), from: daily, until: next };
    this.cached = starts;
    return starts;
  }

  /** Where `period` began for an instant: 0 for `total`. */
  start(period: BudgetPeriod, at: number): number {
    return period === 'total' ? 0 : this.starts(at)[period];
  }

  /** When the period `at` falls in ends and the budget resets; null for `total`, which never does. */
  resetsAt(period: BudgetPeriod, at: number): number | null {
    if (period === 'total') return null;
    const date = this.wallDate(at);
    if (period === 'daily') return this.midnight(addDays(date, 1));
    if (period === 'weekly') return this.midnight(addDays(date, 7 - weekdayFromMonday(date)));
    return this.midnight(date.month === 12 ? { year: date.year + 1, month: 1, day: 1 } : { year: date.year, month: date.month + 1, day: 1 });
  }

  private wallDate(at: number): WallDate {
    if (this.utc) {
      const d = new Date(at);
      return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
    }
    const parts = this.wallClock(at);
    return { year: parts[0], month: parts[1], day: parts[2] };
  }

  /** [year, month, day, hour, minute, second] on the zone's wall clock. */
  private wallClock(at: number): number[] {
    const out = [0, 0, 0, 0, 0, 0];
    for (const part of this.format!.formatToParts(at)) {
      const slot = WALL_SLOTS[part.type];
      if (slot !== undefined) out[slot] = Number(part.value);
    }
    return out;
  }

  /** The zone's offset from UTC at an instant, in milliseconds. */
  private offset(at: number): number {
    const [y, mo, d, h, mi, s] = this.wallClock(at);
    return Date.UTC(y, mo - 1, d, h, mi, s) - Math.floor(at / 1000) * 1000;
  }

  /** The first instant of a wall date in the zone. */
  private midnight(date: WallDate): number {
    const wall = Date.UTC(date.year, date.month - 1, date.day);
    if (this.utc) return wall;
    // Two passes settle the offset across a transition; a skipped midnight lands on the first instant after the gap.
    const first = wall - this.offset(wall);
    const second = wall - this.offset(first);
    return this.wallDayStarts(second, date) ? second : Math.max(first, second);
  }

  private wallDayStarts(at: number, date: WallDate): boolean {
    const [y, mo, d] = this.wallClock(at);
    return y === date.year && mo === date.month && d === date.day;
  }
}

const WALL_SLOTS: Partial<Record<string, number>> = { year: 0, month: 1, day: 2, hour: 3, minute: 4, second: 5 };

function addDays(date: WallDate, days: number): WallDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day) + days * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** 0 for Monday ... 6 for Sunday (ISO 8601 weeks). */
function weekdayFromMonday(date: WallDate): number {
  return (new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay() + 6) % 7;
}
