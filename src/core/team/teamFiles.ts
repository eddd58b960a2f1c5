// The deployment folder `team init` writes: plain files a person can read and keep in git (secrets and
// generated state are listed in its .gitignore).
//   team.json            the spec (edit it, run `team init` again)
//   nginx/nginx.conf     rendered from team.json
//   nginx/keys.map       key digests → key ids (no keys)
//   nginx/tls/cert.pem   the certificate; key.pem beside it is never committed
//   proxy/Dockerfile     the proxy image (Debian's nginx)
//   logs/access.log      one JSON line per request with the key id (not committed)
//   model_repository/    rendered on `team up` (not committed)
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { formatKeysFile, parseKeysFile, type KeyEntry } from './keys';
import { renderNginxConf } from './nginxConf';
import { formatTeamSpec, parseTeamSpec, TEAM_SPEC_FILE, TeamSpecError, type TeamSpec } from './teamSpec';

export const teamPaths = (dir: string) => ({
  spec: join(dir, TEAM_SPEC_FILE),
  nginxConf: join(dir, 'nginx', 'nginx.conf'),
  keys: join(dir, 'nginx', 'keys.map'),
  cert: join(dir, 'nginx', 'tls', 'cert.pem'),
  key: join(dir, 'nginx', 'tls', 'key.pem'),
  dockerfile: join(dir, 'proxy', 'Dockerfile'),
  logs: join(dir, 'logs'),
  accessLog: join(dir, 'logs', 'access.log'),
  repository: join(dir, 'model_repository'),
  gitignore: join(dir, '.gitignore'),
});

const GITIGNORE = ['# secrets and generated state of the team deployment', 'nginx/tls/key.pem', 'logs/', 'model_repository/', ''].join('\n');

/** Writes a file through a temporary name and a rename: nginx never reads half a keys file. */
export function writeAtomic(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, path);
}

export function readTeamSpec(dir: string): TeamSpec {
  const p = teamPaths(dir).spec;
  if (!existsSync(p)) throw new TeamSpecError(`${p} does not exist: run \`triton-chatglm team init --dir ${dir}\` first`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(p, 'utf8'));
  } catch (e) {
    throw new TeamSpecError(`${p} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseTeamSpec(value);
}

export function readKeys(dir: string): KeyEntry[] {
  const p = teamPaths(dir).keys;
  return existsSync(p) ? parseKeysFile(readFileSync(p, 'utf8')) : [];
}

export function writeKeys(dir: string, entries: readonly KeyEntry[]): void {
  writeAtomic(teamPaths(dir).keys, formatKeysFile(entries));
}

/**
 * Writes the spec and everything rendered from it; keeps an existing keys file and certificate.
 * `dockerfile` is the template's text (deploy/team/nginx/Dockerfile of the package).
 */
export function writeTeamFiles(dir: string, spec: TeamSpec, dockerfile: string): void {
  const p = teamPaths(dir);
  writeAtomic(p.spec, formatTeamSpec(spec));
  writeAtomic(p.nginxConf, renderNginxConf(spec));
  writeAtomic(p.dockerfile, dockerfile);
  if (!existsSync(p.keys)) writeKeys(dir, []);
  if (!existsSync(p.gitignore)) writeAtomic(p.gitignore, GITIGNORE);
  mkdirSync(p.logs, { recursive: true });
}
