// npm run check-config [-- PATH]: the server's own loader, serving nothing. Exit 0 with a summary, or 1 with every error.
import { ConfigError } from '../base/errors.js';
import { resolveConfigPath, summarize } from '../config/load.js';
import { loadConfig } from '../compile/load-config.js';

const args = process.argv.slice(2);
const file = args[0] && !args[0].startsWith('--') ? resolveConfigPath(['--config', args[0]]) : resolveConfigPath(args);
try {
  const config = await loadConfig(file);
  for (const warning of config.warnings) console.log(`warning: ${warning}`);
  console.log(`config OK: ${file}`);
  console.log(summarize(config));
  process.exit(0);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  for (const problem of err.problems) console.log(problem);
  console.log(`config invalid: ${err.problems.length} error(s)`);
  process.exit(1);
}
