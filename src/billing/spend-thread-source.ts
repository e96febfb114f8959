// Where the spend thread's code comes from: the compiled file beside this one (`npm start` runs dist/), or, when the
// gateway runs from its TypeScript source (tests, tsx), one CommonJS bundle of spend-thread.ts made by esbuild (tsx's
// own transpiler) once per process: a worker thread does not inherit the loader that runs the TypeScript.
export type SpendThreadSource = { file: URL } | { code: string };

let bundled: Promise<SpendThreadSource> | undefined;

export function spendThreadSource(): Promise<SpendThreadSource> {
  const here = import.meta.url;
  if (here.endsWith('.js')) return Promise.resolve({ file: new URL('./spend-thread.js', here) });
  bundled ??= bundle(new URL('./spend-thread.ts', here));
  return bundled;
}

async function bundle(entry: URL): Promise<SpendThreadSource> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry.pathname],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
  });
  // Packages (better-sqlite3) resolve from the entry's folder, as they would for the module itself.
  const code = `const { createRequire } = require('node:module');
(function (require, module, exports) {
${out.outputFiles[0].text}
})(createRequire(${JSON.stringify(entry.href)}), { exports: {} }, {});`;
  return { code };
}
