// `triton-chatglm` entry point (bundled by esbuild to dist/cli.js). Parses arguments, wires Ctrl+C to an
// AbortSignal (a second Ctrl+C exits at once), runs the command and maps failures to messages and exit codes.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCommand, ServerNotRunningError } from './commands';
import { parseCli, USAGE } from './options';
import { EXIT, reportError } from './reportError';
import { runTeam } from './team';

/** The directory that holds triton/ (package root): dist/.. when bundled, src/cli/../.. from source. */
export function findPackageRoot(start: string): string {
  let dir = start;
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'triton', 'model_repository'))) return dir;
    dir = dirname(dir);
  }
  return dirname(start);
}

function packageVersion(root: string): string {
  try {
    return String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const io = {
    out: (s: string) => void process.stdout.write(s),
    err: (s: string) => void process.stderr.write(s),
  };
  let verbose = argv.includes('-v') || argv.includes('--verbose');
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT.interrupted);
    io.err('\ninterrupted (press Ctrl+C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  try {
    if (argv[0] === 'team') return await runTeam(argv.slice(1), env, { ...io, packageRoot: findPackageRoot(__dirname) });
    const cfg = parseCli(argv, env);
    verbose = cfg.verbose;
    if (cfg.help) {
      io.out(USAGE);
      return EXIT.ok;
    }
    if (cfg.version) {
      io.out(`${packageVersion(findPackageRoot(__dirname))}\n`);
      return EXIT.ok;
    }
    const code = await runCommand(cfg, { ...io, signal: controller.signal, packageRoot: findPackageRoot(__dirname), tty: process.stderr.isTTY === true });
    return controller.signal.aborted ? EXIT.interrupted : code;
  } catch (e) {
    if (e instanceof ServerNotRunningError) {
      io.err(`error: ${e.message}\nfix: start it with \`triton-chatglm start\` (see \`triton-chatglm status\`).\n`);
      if (e.logTail.length) io.err(`last log lines:\n${e.logTail.slice(-20).map((l) => `  ${l}`).join('\n')}\n`);
      return EXIT.notRunning;
    }
    const r = reportError(e, verbose);
    io.err(`${r.lines.join('\n')}\n`);
    return controller.signal.aborted ? EXIT.interrupted : r.exitCode;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
}

if (require.main === module) {
  void main(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
