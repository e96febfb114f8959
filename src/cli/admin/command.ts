// The shape of one admin subcommand; each file in this folder exports `commands`.
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
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
  /** Make the scopes the endpoint catalogue declares known first (read from the catalogue's files alone). */
  readsScopes?: boolean;
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

type Options = NonNullable<ParseArgsConfig['options']>;

/** Every command's options and --config: enough to tell an option's value from a command word wherever the flag stands. */
function allOptions(commands: AdminCommand[]): Options {
  const options: Options = { config: { type: 'string' }, help: { type: 'boolean' } };
  for (const command of commands) {
    for (const [name, option] of Object.entries(command.options)) {
      if (options[name] && options[name].type !== option.type) throw new Error(`admin option --${name} is a ${options[name].type} in one command and a ${option.type} in "${command.name}"`);
      options[name] = option;
    }
  }
  return options;
}

/**
 * The command the words name and the arguments left for it, flags anywhere: `--config X key create` is `key create
 * --config X`. The command's words are the first positionals; the rest of argv, in order, is the command's to parse.
 */
export function selectCommand(argv: string[], commands: AdminCommand[]): { command?: AdminCommand; rest: string[] } {
  const { tokens } = parseArgs({ args: argv, options: allOptions(commands), allowPositionals: true, strict: false, tokens: true });
  const positionals = tokens.filter((t) => t.kind === 'positional');
  const words = positionals.map((t) => t.value);
  const command = commands.find((c) => c.name.split(' ').every((w, i) => words[i] === w));
  if (!command) return { rest: argv };
  const taken = new Set(positionals.slice(0, command.name.split(' ').length).map((t) => t.index));
  return { command, rest: argv.filter((_, i) => !taken.has(i)) };
}
