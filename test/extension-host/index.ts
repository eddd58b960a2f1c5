// Entry point of the extension-host suite (the module given as --extensionTestsPath): VS Code loads it inside the
// extension host and calls run(). It runs every *.test.js bundled next to it with mocha and writes one JSON record
// per test to $E2E_EXTHOST_RESULTS, which test/e2e/run.mjs turns into JUnit test cases.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

export interface ExtensionHostResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs: number;
  error?: string;
}

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: Number(process.env.E2E_EXTHOST_TEST_TIMEOUT_MS ?? 180_000), reporter: 'spec' });
  for (const file of readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort()) mocha.addFile(join(__dirname, file));
  const results: ExtensionHostResult[] = [];
  const record = (r: ExtensionHostResult) => {
    results.push(r);
    console.log(`[extension-host] ${r.state}: ${r.title}${r.error ? ` -- ${r.error.split('\n')[0]}` : ''}`);
  };
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const out = process.env.E2E_EXTHOST_RESULTS;
      if (out) writeFileSync(out, JSON.stringify({ pid: process.pid, results }, null, 2));
      if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
      else if (results.length === 0) reject(new Error('no extension-host tests ran'));
      else resolve();
    });
    runner.on('pass', (t) => record({ title: t.fullTitle(), state: 'passed', durationMs: t.duration ?? 0 }));
    runner.on('fail', (t, err: Error) => record({ title: t.fullTitle(), state: 'failed', durationMs: t.duration ?? 0, error: err?.stack ?? String(err) }));
    runner.on('pending', (t) => record({ title: t.fullTitle(), state: 'pending', durationMs: 0 }));
  });
}
