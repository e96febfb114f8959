// npm run admin -- <group> <action> [options]: workspaces, keys, users, the audit log, against the configured database.
// A thin client of the admin service (src/admin/service.ts): it reads only the config's server, storage and admin
// sections, so a command answers without loading a channel or compiling a mapping. `reload` alone checks the whole config.
import { parseArgs } from 'node:util';
import { declareScopes, isScope } from '../auth/scopes.js';
import { resolveConfigPath } from '../config/locate.js';
import { loadOperatorConfig } from '../config/operator.js';
import { catalogueScopes } from '../config/read.js';
import { ConfigError, GatewayError } from '../base/errors.js';
import { openConfiguredDatabase } from '../store/open.js';
import { selectCommand, type AdminCommand } from './admin/command.js';
import * as audit from './admin/audit.js';
import * as billing from './admin/billing.js';
import * as keys from './admin/keys.js';
import * as reload from './admin/reload.js';
import * as users from './admin/users.js';
import * as webhooks from './admin/webhooks.js';
import { rerunIfStale } from './admin/stale-build.js';

// Imported by name, so the build can bundle the CLI into one file (scripts/build.mjs): a command answers in a third of
// the time it took to resolve the few hundred modules it reads.
const commands: AdminCommand[] = [audit, billing, keys, reload, users, webhooks].flatMap((mod) => mod.commands);

/** The whole config loader, for the commands that check it: read from dist/ (or src/) beside the bundle, never inlined. */
const fullLoader = '../compile/load-config.js';

function usage(commands: AdminCommand[]): string {
  return ['usage: npm run admin -- <command> [options] [--config PATH]', '', ...commands.map((c) => `  ${c.name.padEnd(20)} ${c.usage}`)].join('\n');
}

/** True when `--scopes` is absent, `all`, or lists only scopes known without the catalogue. */
function namesOnlyKnownScopes(scopes: unknown): boolean {
  if (typeof scopes !== 'string' || scopes === 'all') return true;
  return scopes.split(',').every((scope) => !scope.trim() || isScope(scope.trim()));
}

async function main() {
  rerunIfStale(import.meta.url);
  const argv = process.argv.slice(2);
  const { command, rest } = selectCommand(argv, commands);
  if (!command || argv.includes('--help')) {
    console.log(usage(commands));
    process.exit(command ? 0 : 2);
  }
  const { values, positionals } = parseArgs({ args: rest, options: { ...command.options, config: { type: 'string' } }, allowPositionals: true, strict: true });
  const file = resolveConfigPath(values.config ? ['--config', String(values.config)] : []);
  const config = command.checksConfig ? await ((await import(fullLoader)) as typeof import('../compile/load-config.js')).loadConfig(file) : loadOperatorConfig(file);
  // A key may be given any scope its endpoint catalogue declares: read from the catalogue alone, and only when a scope
  // named is not one of the gateway's own.
  if (command.readsScopes && !namesOnlyKnownScopes((values as Record<string, unknown>).scopes)) declareScopes(catalogueScopes(file, process.env));
  const database = await openConfiguredDatabase(config, process.env, { shortLived: true });
  try {
    await command.run({ db: database.db, config, values: values as Record<string, string | boolean | undefined>, positionals, print: (line) => console.log(line) });
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) for (const p of err.problems) console.error(p);
  else if (err instanceof GatewayError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') console.error(`error: ${(err as Error).message}`);
  else console.error(err);
  process.exit(1);
});
