// Runs the mocha suite of test/extension-host inside the extension host the way @vscode/test-electron does
// (runTests with --extensionDevelopmentPath = this repository, --extensionTestsPath = the bundled suite), with
// test/extension-host/code-server-shim.mjs as the "VS Code executable" (desktop VS Code cannot be downloaded here;
// see test/e2e/README.md for running the same suite in desktop VS Code). Returns one result per mocha test.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { runTests } from '@vscode/test-electron';
import { log, projectRoot, writeRemoteSettings } from './lib.mjs';

export const suiteDir = join(projectRoot, 'test/extension-host');
export const shim = join(suiteDir, 'code-server-shim.mjs');
/** Inside the repository, so that `mocha` resolves from its node_modules (out/ is ignored by git). */
export const bundleDir = join(projectRoot, 'out/extension-host');

/** Bundles index.ts and every *.test.ts of the suite (CommonJS; `vscode` and `mocha` stay external). */
export async function buildSuite() {
  rmSync(bundleDir, { recursive: true, force: true });
  const entries = readdirSync(suiteDir).filter((f) => f === 'index.ts' || f.endsWith('.test.ts')).map((f) => join(suiteDir, f));
  await build({ entryPoints: entries, outdir: bundleDir, bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    external: ['vscode', 'mocha'], sourcemap: 'inline', logLevel: 'warning' });
  return join(bundleDir, 'index.js');
}

export async function runExtensionHostSuite({ cfg, env, folder, dir }) {
  const started = Date.now();
  const fail = (error) => [{ name: 'extension host: suite', ok: false, ms: Date.now() - started, error }];
  try {
    // The suite loads the development build (package.json "main"); the UI journeys' `npm run package` makes one.
    if (!existsSync(join(projectRoot, 'dist/extension.js'))) {
      const b = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, encoding: 'utf8' });
      if (b.status !== 0) return fail(`npm run build failed:\n${(b.stdout + b.stderr).slice(-3000)}`);
    }
    const testsPath = await buildSuite();
    const userDataDir = join(dir, 'user-data');
    // Remote settings: see writeRemoteSettings (a desktop VS Code window reads the same keys from its user settings).
    if (process.env.E2E_VSCODE) {
      mkdirSync(join(userDataDir, 'User'), { recursive: true });
      writeFileSync(join(userDataDir, 'User/settings.json'), JSON.stringify(cfg.settings, null, 2));
    } else {
      writeRemoteSettings(userDataDir, cfg.settings);
    }
    const resultsFile = join(dir, 'results.json');
    log(`----  extension-host suite (runTests with ${process.env.E2E_VSCODE || 'the code-server shim'})`);
    let code;
    // E2E_VSCODE=desktop: let runTests download desktop VS Code (needs internet and, on Linux, a display such as
    // xvfb-run); E2E_VSCODE=<path>: that VS Code executable; default: code-server through the shim.
    const desktop = process.env.E2E_VSCODE;
    try {
      code = await runTests({
        ...(desktop === 'desktop' ? {} : { vscodeExecutablePath: desktop || shim }),
        extensionDevelopmentPath: projectRoot,
        extensionTestsPath: testsPath,
        launchArgs: [folder, `--user-data-dir=${userDataDir}`, `--extensions-dir=${join(dir, 'extensions')}`],
        extensionTestsEnv: {
          ...env,
          E2E_EXTHOST_RESULTS: resultsFile,
          E2E_HTTP_PORT: String(cfg.http),
          E2E_METRICS_PORT: String(cfg.metrics),
          E2E_WEIGHTS_PATH: cfg.settings['tritonChatglm.weightsPath'],
          E2E_FAKE_DOCKER: cfg.settings['tritonChatglm.dockerPath'],
          E2E_USER_DATA_DIR: userDataDir,
          CS_SHIM_SCREENSHOT: join(projectRoot, 'test-results/e2e/extension-host.png'),
        },
      });
    } catch (e) {
      code = e?.code ?? 1; // runTests rejects on a non-zero exit; the results file says which tests failed
    }
    if (!existsSync(resultsFile)) return fail(`the suite wrote no results (exit code ${code}); see the output above`);
    const { results } = JSON.parse(readFileSync(resultsFile, 'utf8'));
    const out = results.map((r) => ({
      name: `extension host: ${r.title}`, ok: r.state === 'passed', ms: r.durationMs,
      error: r.state === 'pending' ? 'skipped tests are not allowed in this suite' : r.error,
    }));
    if (code !== 0 && out.every((r) => r.ok)) out.push(...fail(`the runner exited with ${code} although every test passed`));
    for (const r of out) log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}`);
    return out;
  } catch (e) {
    return fail(String(e?.stack ?? e));
  }
}
