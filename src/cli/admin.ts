// npm run admin -- <group> <action> [options]: workspaces, keys, users, the audit log, against the configured database.
// A thin client of the admin service (src/admin/service.ts): it reads only the config's server, storage and admin
// sections, so a command answers without loading a channel or compiling a mapping. `reload` alone checks the whole config.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { resolveConfigPath } from '../config/locate.js';
import { loadOperatorConfig } from '../config/operator.js';
import { ConfigError, GatewayError } from '../base/errors.js';
import { openConfiguredDatabase } from '../store/open.js';
import { selectCommand, type AdminCommand } from './admin/command.js';

const commandsDir = join(import.meta.dirname, 'admin');

async function loadCommands(): Promise<AdminCommand[]> {
  const files = readdirSync(commandsDir).filter((f) => /\.(ts|js)$/.test(f) && f !== 'command.ts').sort();
  const modules = await Promise.all(files.map((file) => import(pathToFileURL(join(commandsDir, file)).href) as Promise<{ commands?: AdminCommand[] }>));
  return modules.flatMap((mod) => mod.commands ?? []);
}

function usage(commands: AdminCommand[]): string {
  return ['usage: npm run admin -- <command> [options] [--config PATH]', '', ...commands.map((c) => `  ${c.name.padEnd(20)} ${c.usage}`)].join('\n');
}

async function main() {
  const argv = process.argv.slice(2);
  const commands = await loadCommands();
  const { command, rest } = selectCommand(argv, commands);
  if (!command || argv.includes('--help')) {
    console.log(usage(commands));
    process.exit(command ? 0 : 2);
  }
  const { values, positionals } = parseArgs({ args: rest, options: { ...command.options, config: { type: 'string' } }, allowPositionals: true, strict: true });
  const file = resolveConfigPath(values.config ? ['--config', String(values.config)] : []);
  const config = command.checksConfig ? await (await import('../compile/load-config.js')).loadConfig(file) : loadOperatorConfig(file);
  const database = await openConfiguredDatabase(config);
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
