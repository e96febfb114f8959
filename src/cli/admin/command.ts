// The shape of one admin subcommand; each file in this folder exports `commands`.
import type { ParseArgsConfig } from 'node:util';
import type { LoadedConfig } from '../../compile/loaded-config.js';
import type { Db } from '../../store/database.js';

export interface AdminContext {
  db: Db;
  config: LoadedConfig;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  print(line: string): void;
}

export interface AdminCommand {
  /** Words that select the command, e.g. "key create". */
  name: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(ctx: AdminContext): Promise<void>;
}
