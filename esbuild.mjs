// Four bundles: the extension host (node, CommonJS, `vscode` external), the CLI (node, no vscode at all) and the
// two webviews, the chat panel and the Server Status view (browser IIFEs). `--production` minifies; `--watch`
// rebuilds on change.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'info',
  legalComments: 'none',
};

/** The webview bundles (test/webview/support/harness.ts builds them the same way, with RENDER_STATS on). */
const webview = {
  platform: 'browser',
  format: 'iife',
  target: 'chrome120',
  // CSS imported by a bundle (the codicon font's stylesheet) becomes dist/<bundle>.css, its font a file next to it.
  loader: { '.css': 'css', '.ttf': 'file' },
  // Benchmark-only render statistics of the chat panel (src/webview/chat/renderStats.ts): off in the extension.
  define: { RENDER_STATS: 'false' },
};

const builds = [
  {
    ...common,
    // The weights download hashes large files on a worker thread: its script lies next to both node bundles.
    entryPoints: { extension: 'src/vscode/extension.ts', sha256Worker: 'src/core/weights/sha256Worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    ...webview,
    entryPoints: { webview: 'src/webview/chat/main.ts', status: 'src/webview/status/main.ts' },
    outdir: 'dist',
  },
];

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
