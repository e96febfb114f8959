// The shape of one admin subcommand; each file in this folder exports `commands`.
import { userInfo } from 'node:os';
import type { ParseArgsConfig } from 'node:util';
import { AdminService } from '../../admin/service.js';
import { billingConfig } from '../../billing/config.js';
import { BudgetCalendar } from '../../config/periods.js';
import type { OperatorConfig } from '../../config/operator.js';
import type { Db } from '../../store/database.js';

export interface AdminContext {
  db: Db;
  config: OperatorConfig;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  print(line: string): void;
}

export interface AdminCommand {
  /** Words that select the command, e.g. "key create". */
  name: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Load and check the whole config (channels, protocols, mappings) first; other commands read only what they use. */
  checksConfig?: boolean;
  run(ctx: AdminContext): Promise<void>;
}

/** The admin service as the CLI uses it: every workspace, changes recorded as made by the CLI's operating-system user. */
export function adminOf(ctx: AdminContext): AdminService {
  return new AdminService({ db: ctx.db, calendar: new BudgetCalendar(billingConfig(ctx.config).timeZone) }, { kind: 'cli', id: osUser(), address: null });
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}
