// What the test stages need from the machine. Each prerequisite has a check that answers within about a second
// and the command that installs it; test/run-all.mjs checks the selected stages' needs before it runs anything,
// so a missing piece stops `npm test` at once with one line instead of a test that waits for a server that never
// comes. `npm run test:setup` (scripts/setup-test-env.sh) installs all of them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const SETUP_COMMAND = 'npm run test:setup';

/**
 * @typedef {{ label: string, install: string, optional?: string, problem(): string | undefined }} Prerequisite
 * `problem()` says what is wrong, or undefined when the prerequisite is there. An `optional` one only warns
 * (the text says what is lost without it).
 * @type {Record<string, Prerequisite>}
 */
export const PREREQUISITES = {
  'node-modules': {
    label: 'node_modules',
    install: 'npm ci',
    problem() {
      const pkg = readJson(join(root, 'package.json'));
      const lock = readJson(join(root, 'package-lock.json'));
      const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
      for (const name of names) {
        const installed = readJson(join(root, 'node_modules', name, 'package.json'));
        const locked = lock.packages?.[`node_modules/${name}`]?.version;
        if (!installed) return `node_modules/${name} is missing`;
        if (locked && installed.version !== locked) return `node_modules/${name} is ${installed.version}, package-lock.json says ${locked}`;
      }
      return undefined;
    },
  },
  'python-env': {
    label: '.venv (Python test packages + tritonserver)',
    install: 'bash scripts/setup-python.sh',
    problem() {
      const python = join(root, '.venv/bin/python');
      if (!existsSync(python)) return '.venv is missing';
      const r = spawnSync(python, [join(root, 'scripts/check-python-env.py')], { encoding: 'utf8', timeout: 30_000 });
      if (r.error) return `cannot run ${python}: ${r.error.message}`;
      return r.status === 0 ? undefined : (r.stdout.trim() || r.stderr.trim() || `check-python-env.py exited with ${r.status}`);
    },
  },
  chromium: {
    label: 'Chromium',
    install: 'apt-get install chromium',
    problem: () => (existsSync('/usr/bin/chromium') ? undefined : '/usr/bin/chromium is missing'),
  },
  'code-server': {
    label: 'code-server',
    install: 'bash test/e2e/install-code-server.sh',
    problem() {
      const script = readFileSync(join(root, 'test/e2e/install-code-server.sh'), 'utf8');
      const pinned = /^CS_VERSION=(\S+)/m.exec(script)?.[1];
      if (!pinned) return 'test/e2e/install-code-server.sh has no CS_VERSION= line to read the pinned version from';
      const prefix = process.env.CODE_SERVER_PREFIX || join(root, '.cache/code-server');
      const installed = readJson(join(prefix, 'node_modules/code-server/package.json'))?.version;
      if (!installed || !existsSync(join(prefix, 'bin/code-server'))) return `code-server ${pinned} is not installed in ${prefix}`;
      return installed === pinned ? undefined : `${prefix} holds code-server ${installed}, not ${pinned}`;
    },
  },
  'docker-engine': {
    label: 'Docker Engine (docker.io, mmdebstrap, root)',
    install: 'apt-get install docker.io mmdebstrap iproute2',
    problem() {
      const missing = ['/usr/bin/docker', '/usr/sbin/dockerd', '/usr/bin/mmdebstrap', '/usr/sbin/ip'].filter((f) => !existsSync(f));
      if (missing.length) return `${missing.join(', ')} missing`;
      // The stage starts its own dockerd (test/docker/daemon.mjs): that takes root.
      return process.getuid?.() === 0 ? undefined : 'the docker stage starts a private dockerd and must run as root';
    },
  },
  'cjk-fonts': {
    label: 'fonts-wqy-microhei',
    install: 'apt-get install fonts-wqy-microhei',
    optional: 'Chinese text in the screenshots will show as boxes (the checks read the DOM and still pass)',
    problem: () => (existsSync('/usr/share/fonts/truetype/wqy/wqy-microhei.ttc') ? undefined : 'no Chinese font'),
  },
};

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Checks the needs of `stages` (each `{ name, needs: string[] }`). Returns one line for what blocks them (naming
 * the stages each missing piece blocks and how to install it) or undefined, and the warnings of optional ones.
 */
export function checkStages(stages) {
  const blocking = [];
  const warnings = [];
  const names = [...new Set(stages.flatMap((s) => s.needs))];
  for (const id of names) {
    const p = PREREQUISITES[id];
    if (!p) throw new Error(`unknown prerequisite '${id}'`);
    const problem = p.problem();
    if (!problem) continue;
    const users = stages.filter((s) => s.needs.includes(id)).map((s) => s.name).join(', ');
    if (p.optional) warnings.push(`note: ${p.label}: ${problem} (${users}): ${p.optional}; install: ${p.install}`);
    else blocking.push({ id, text: `${p.label}: ${problem} (needed by ${users}; install: ${p.install})` });
  }
  if (!blocking.length) return { warnings };
  const blocked = new Set(stages.filter((s) => s.needs.some((n) => blocking.some((b) => b.id === n))).map((s) => s.name));
  const ready = stages.filter((s) => !blocked.has(s.name)).map((s) => s.name);
  const line = `missing test prerequisites: ${blocking.map((b) => b.text).join('; ')}. `
    + `Install everything the tests need with: ${SETUP_COMMAND}`
    + (ready.length ? ` — or run only the stages that are ready: node test/run-all.mjs ${ready.join(' ')}` : '');
  return { line, warnings };
}
