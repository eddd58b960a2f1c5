// The benchmark parts run-all.mjs runs, one child process each (one at a time, so they never compete for the
// CPU), with the sizes of each mode: `full` (what bench/results/latest.json holds), `quick` (a few minutes, for
// a look while working) and `smoke` (tiny, for the unit test that keeps this code from rotting).
import { fileURLToPath } from 'node:url';
import { benchPython } from './machine.mjs';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export const MODES = {
  full: {
    rounds: 5, webviewRounds: 7, curveTokens: 256, levels: [1, 2, 4, 8, 16], clientTokens: 256, overheadRequests: 200, selections: 8,
    webviewShort: 4000, webviewLong: 8000, blockChars: 65536, blockRounds: 5, hugeChars: 2 * 1024 * 1024, hugeRounds: 3, stepDelayMs: 10, serverBench: true, runPackage: true, downloadMb: 256,
    scheduler: { longTokens: 400, shortTokens: 16, joinAfterMs: 300, requests: 16, staggerMs: 50, minTokens: 32, maxTokens: 256 },
    completion: { rounds: 20, serverRounds: 3, completions: 20, completionTokens: 32, chats: 4, chatTokens: 2000 },
  },
  quick: {
    rounds: 3, webviewRounds: 3, curveTokens: 128, levels: [1, 4, 8, 16], clientTokens: 128, overheadRequests: 100, selections: 8,
    webviewShort: 1000, webviewLong: 2000, blockChars: 32768, blockRounds: 3, hugeChars: 2 * 1024 * 1024, hugeRounds: 1, stepDelayMs: 10, serverBench: false, runPackage: true, downloadMb: 64,
    scheduler: { longTokens: 400, shortTokens: 16, joinAfterMs: 300, requests: 16, staggerMs: 50, minTokens: 32, maxTokens: 256 },
    completion: { rounds: 10, serverRounds: 2, completions: 10, completionTokens: 32, chats: 4, chatTokens: 2000 },
  },
  smoke: {
    rounds: 1, webviewRounds: 1, curveTokens: 8, levels: [1, 8], clientTokens: 8, overheadRequests: 5, selections: 2,
    webviewShort: 40, webviewLong: 80, blockChars: 4096, blockRounds: 1, hugeChars: 16 * 1024, hugeRounds: 1, stepDelayMs: 1, serverBench: false, runPackage: false, downloadMb: 4,
    scheduler: { longTokens: 40, shortTokens: 8, joinAfterMs: 20, requests: 4, staggerMs: 10, minTokens: 8, maxTokens: 24 },
    completion: { rounds: 2, serverRounds: 1, completions: 2, completionTokens: 4, chats: 1, chatTokens: 400 },
  },
};

export const PART_NAMES = ['server', 'scheduler', 'engine', 'curve', 'client', 'openai', 'completion', 'completion-server', 'webview', 'footprint', 'activation', 'memory', 'download'];

/**
 * Command line of each part (relative to the project root) writing its JSON to `out`, and its time limit. The
 * server part is bench/server_bench.mjs, which writes bench/results/server.json itself.
 */
export function partCommand(name, mode, out, nodePath) {
  const m = MODES[mode];
  const tsx = [nodePath, '--import', 'tsx'];
  switch (name) {
    case 'server':
      return { argv: [nodePath, 'bench/server_bench.mjs'], timeoutMs: 8 * 60_000, writes: 'bench/results/server.json' };
    case 'scheduler': {
      const c = m.scheduler;
      return {
        argv: [nodePath, 'bench/scheduler_bench.mjs', `--out=${out}`, `--rounds=${m.rounds}`, `--step-delay-ms=${m.stepDelayMs}`,
          `--long-tokens=${c.longTokens}`, `--short-tokens=${c.shortTokens}`, `--join-after-ms=${c.joinAfterMs}`, `--requests=${c.requests}`,
          `--stagger-ms=${c.staggerMs}`, `--min-tokens=${c.minTokens}`, `--max-tokens=${c.maxTokens}`],
        timeoutMs: 8 * 60_000,
      };
    }
    case 'engine':
      return { argv: [benchPython(projectRoot), 'bench/engine_bench.py', `--out=${out}`, `--rounds=${m.rounds}`, ...(mode === 'smoke' ? ['--smoke'] : [])], timeoutMs: 12 * 60_000 };
    case 'curve':
      return { argv: [nodePath, 'bench/curve.mjs', `--out=${out}`, `--rounds=${m.rounds}`, `--tokens=${m.curveTokens}`, `--levels=${m.levels.join(',')}`], timeoutMs: 9 * 60_000 };
    case 'client':
      return {
        argv: [...tsx, 'bench/client.ts', `--out=${out}`, `--rounds=${m.rounds}`, `--tokens=${m.clientTokens}`, `--requests=${m.overheadRequests}`,
          `--selections=${m.selections}`, `--step-delay-ms=${m.stepDelayMs}`],
        timeoutMs: 8 * 60_000,
      };
    case 'openai':
      return { argv: [...tsx, 'bench/openai.ts', `--out=${out}`, `--rounds=${m.rounds}`, `--tokens=${m.clientTokens}`, `--step-delay-ms=${m.stepDelayMs}`], timeoutMs: 8 * 60_000 };
    // Completions keep the paced engine (10 ms a step) and the 250 ms debounce in every mode: their targets are
    // stated in those terms (bench/README.md); only the number of rounds shrinks.
    case 'completion':
      return { argv: [...tsx, 'bench/completion.ts', `--out=${out}`, `--rounds=${m.completion.rounds}`, '--step-delay-ms=10', '--debounce-ms=250'], timeoutMs: 5 * 60_000 };
    case 'completion-server': {
      const c = m.completion;
      return {
        argv: [nodePath, 'bench/completion_server_bench.mjs', `--out=${out}`, `--rounds=${c.serverRounds}`, '--step-delay-ms=10', `--completions=${c.completions}`,
          `--completion-tokens=${c.completionTokens}`, `--chats=${c.chats}`, `--chat-tokens=${c.chatTokens}`],
        timeoutMs: 8 * 60_000,
      };
    }
    case 'webview':
      return {
        argv: [...tsx, 'bench/webview.ts', `--out=${out}`, `--rounds=${m.webviewRounds}`, `--short=${m.webviewShort}`, `--long=${m.webviewLong}`,
          `--block-chars=${m.blockChars}`, '--block-per-frame=64', `--block-rounds=${m.blockRounds}`, `--huge-chars=${m.hugeChars}`, `--huge-rounds=${m.hugeRounds}`],
        timeoutMs: 15 * 60_000,
      };
    case 'footprint':
      return { argv: [nodePath, 'bench/footprint.mjs', `--out=${out}`, ...(m.runPackage ? [] : ['--no-package'])], timeoutMs: 5 * 60_000 };
    case 'activation':
      return { argv: [nodePath, 'bench/activation.mjs', `--out=${out}`], timeoutMs: 60_000 };
    case 'memory': // byte counts at ChatGLM3-6B's shapes on torch's meta device (no GPU): the same in every mode but smoke
      return { argv: [benchPython(projectRoot), 'bench/memory_plan_bench.py', `--out=${out}`, ...(mode === 'smoke' ? ['--smoke'] : [])], timeoutMs: 5 * 60_000 };
    case 'download':
      return { argv: [...tsx, 'bench/download.ts', `--out=${out}`, `--rounds=${m.rounds}`, `--mb=${m.downloadMb}`], timeoutMs: 5 * 60_000 };
    default:
      throw new Error(`unknown benchmark part '${name}'`);
  }
}
