// `triton-chatglm team ...`: flags → src/core/team, results → the terminal. A command of its own (its flags are
// not the single-server ones), dispatched from main.ts before the other commands are parsed.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DockerCli } from '../core/server/dockerCli';
import {
  fetchReplicaHealth, teamContainerStates, teamPaths, teamDown, teamInit, teamKeysAdd, teamKeysList, teamKeysRevoke, teamUp,
} from '../core/team';
import { EXIT } from './reportError';
import { UsageError } from './options';

export const TEAM_USAGE = `Usage: triton-chatglm team <command> [options]

A team server: N tritonservers (one per GPU, or other machines) behind an nginx proxy with TLS and per-user API
keys (docs/TEAM.md). The deployment is a folder of plain files (--dir, default ./deploy/team).

Commands:
  init            write team.json, nginx/nginx.conf, nginx/keys.map, proxy/Dockerfile and a self-signed
                  certificate (its SHA-256 fingerprint is printed); again after editing team.json
  up              start the replicas (model loaded at start) and the proxy; reload a running proxy
  down            stop and remove the proxy, then the replicas
  keys add ID     issue a key for ID (printed once; only its digest is stored) and reload the proxy
  keys revoke ID  remove ID's key and reload the proxy (answers already streaming finish)
  keys list       the key ids
  status          the containers of the deployment, and with TRITON_CHATGLM_KEY set, each replica's readiness
                  as the proxy sees it

Options (init):
  --gpus LIST            one replica per GPU id (default 0), e.g. 0,1
  --url HOST:PORT        a replica on another machine (HTTP port; its gRPC port is the next one); repeatable
  --bind-address ADDR    where the proxy listens (default 127.0.0.1; 0.0.0.0 exposes it to the network)
  --port N               HTTPS port (default 8443)      --grpc-port N   gRPC port (default 8444)
  --replica-port N       first port of the local replicas (default 18000, +10 per replica)
  --image IMAGE          the serving image               --proxy-image IMAGE  the proxy image
  --model ID             the catalog model the replicas serve (default chatglm3-6b)
  --weights DIR          the checkpoint folder (mounted read-only)
  --tls-name NAME        another name or address for the self-signed certificate; repeatable
  --cert FILE --key FILE a certificate to use instead of a self-signed one
  --no-ulimits           no --ulimit memlock/stack on the replicas (rootless Docker)
  --force                replace an existing team.json
Options (all):  --dir DIR   --docker PATH   --name NAME (init)
Options (up):   --proxy-base IMAGE (build the proxy on this base)   --build-proxy (rebuild it)
`;

export interface TeamIo {
  out(text: string): void;
  err(text: string): void;
  packageRoot: string;
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv], allowPositionals: true, strict: true,
      options: {
        dir: { type: 'string' }, docker: { type: 'string' }, name: { type: 'string' }, gpus: { type: 'string' },
        url: { type: 'string', multiple: true }, 'bind-address': { type: 'string' }, port: { type: 'string' },
        'grpc-port': { type: 'string' }, 'replica-port': { type: 'string' }, image: { type: 'string' },
        'proxy-image': { type: 'string' }, weights: { type: 'string' }, model: { type: 'string' }, 'tls-name': { type: 'string', multiple: true },
        cert: { type: 'string' }, key: { type: 'string' }, 'no-ulimits': { type: 'boolean' }, force: { type: 'boolean' },
        'proxy-base': { type: 'string' }, 'build-proxy': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

const num = (flag: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${flag} must be a number`);
  return Number(v);
};

export async function runTeam(argv: readonly string[], env: NodeJS.ProcessEnv, io: TeamIo, cwd = process.cwd()): Promise<number> {
  const { values: v, positionals } = parse(argv);
  const [command, sub, id] = positionals;
  if (v.help || !command) { io.out(TEAM_USAGE); return EXIT.ok; }
  const dir = resolve(cwd, v.dir ?? env.TRITON_CHATGLM_TEAM_DIR ?? join('deploy', 'team'));
  const docker = new DockerCli(v.docker ?? env.TRITON_CHATGLM_DOCKER ?? 'docker');
  switch (command) {
    case 'init': {
      const r = await teamInit(dir, {
        ...(v.name ? { name: v.name } : {}),
        ...(v.gpus ? { gpus: v.gpus.split(',').map((g) => [g.trim()]).filter((g) => g[0]) } : {}),
        ...(v.url ? { urls: v.url } : {}),
        ...(v['bind-address'] ? { bindAddress: v['bind-address'] } : {}),
        ...(v.port ? { httpsPort: num('port', v.port)! } : {}),
        ...(v['grpc-port'] ? { grpcPort: num('grpc-port', v['grpc-port'])! } : {}),
        ...(v['replica-port'] ? { replicaBasePort: num('replica-port', v['replica-port'])! } : {}),
        ...(v.image ? { image: v.image } : {}),
        ...(v['proxy-image'] ? { proxyImage: v['proxy-image'] } : {}),
        ...(v.weights ? { weightsPath: resolve(cwd, v.weights) } : {}),
        ...(v.model ? { model: v.model } : {}),
        ...(v['tls-name'] ? { tlsNames: v['tls-name'] } : {}),
        ...(v.cert ? { certFile: resolve(cwd, v.cert) } : {}),
        ...(v.key ? { keyFile: resolve(cwd, v.key) } : {}),
        ...(v['no-ulimits'] ? { raiseUlimits: false } : {}),
        force: v.force === true,
        dockerfileTemplate: join(io.packageRoot, 'deploy', 'team', 'proxy', 'Dockerfile'),
      });
      io.out(`team "${r.spec.name}" written to ${dir}: ${r.spec.replicas.length} replica(s), proxy on https://${r.spec.bindAddress}:${r.spec.httpsPort}\n`);
      io.out(`certificate SHA-256 fingerprint${r.selfSigned ? ' (self-signed)' : ''}: ${r.fingerprint}\n`);
      io.out('next: `triton-chatglm team keys add <user>`, then `triton-chatglm team up`\n');
      return EXIT.ok;
    }
    case 'up': {
      const spec = await teamUp(docker, dir, {
        repositorySource: join(io.packageRoot, 'triton', 'model_repository'),
        ...(v['proxy-base'] ? { proxyBase: v['proxy-base'] } : {}),
        buildProxy: v['build-proxy'] === true,
        onStep: (t) => io.err(`${t}\n`),
      });
      io.out(`team "${spec.name}" is up: https://${spec.bindAddress}:${spec.httpsPort} (the replicas load the model in the background)\n`);
      return EXIT.ok;
    }
    case 'down':
      for (const name of await teamDown(docker, dir)) io.out(`removed ${name}\n`);
      return EXIT.ok;
    case 'keys': {
      if (sub === 'list' && !id) {
        for (const k of teamKeysList(dir)) io.out(`${k.id}${k.note ? `\t${k.note}` : ''}\n`);
        return EXIT.ok;
      }
      if ((sub !== 'add' && sub !== 'revoke') || !id) throw new UsageError('team keys add|revoke ID, or team keys list');
      if (sub === 'add') {
        const r = await teamKeysAdd(docker, dir, id);
        io.err(`key for ${id} (shown once; give it to ${id}, who sets it as the team key):\n`);
        io.out(`${r.key}\n`);
        if (r.reloaded) io.err('the proxy reloaded its keys\n');
      } else {
        const r = await teamKeysRevoke(docker, dir, id);
        io.err(`${id}'s key is revoked${r.reloaded ? '; the proxy reloaded (answers already streaming finish)' : ''}\n`);
      }
      return EXIT.ok;
    }
    case 'status': {
      const { spec, containers } = await teamContainerStates(docker, dir);
      io.out(`team "${spec.name}": https://${spec.bindAddress}:${spec.httpsPort}\n`);
      for (const c of containers) io.out(`  ${c.name}\t${c.state}\n`);
      if (env.TRITON_CHATGLM_KEY) {
        const host = spec.bindAddress === '0.0.0.0' ? '127.0.0.1' : spec.bindAddress.includes(':') ? `[${spec.bindAddress}]` : spec.bindAddress;
        const health = await fetchReplicaHealth(`https://${host}:${spec.httpsPort}`, env.TRITON_CHATGLM_KEY, readFileSync(teamPaths(dir).cert, 'utf8'));
        io.out('replicas as the proxy sees them:\n');
        for (const h of health) io.out(`  ${h.name}\t${h.ready ? 'ready' : `not ready (HTTP ${h.status})`}\n`);
      } else {
        io.out('(set TRITON_CHATGLM_KEY to a team key to see the replicas\' health through the proxy)\n');
      }
      return containers.every((c) => c.state === 'running') ? EXIT.ok : EXIT.notRunning;
    }
    default:
      throw new UsageError(`unknown team command: ${command}`);
  }
}
