// nginx.conf of a team deployment, rendered from team.json. Debian's nginx (1.22) with set-misc for the key digest.
// Only an allowlist of Triton's inference APIs is proxied; everything else (model control, repository,
// shared memory, trace, logging, metrics) answers 403 from the proxy itself. Paths are matched after nginx has
// normalised them and exactly that normalised path is sent on, so no encoding trick reaches another API.
import { TEAM_PROXY_PREFIX } from '../triton/errors';
import { KEY_DIGEST_LABEL } from './keys';
import { replicaAddress, type TeamSpec } from './teamSpec';

/** Where the deployment's nginx/ folder is mounted in the proxy container. */
export const PROXY_CONF_DIR = '/etc/triton-chatglm-team';
export const PROXY_LOG_DIR = '/var/log/triton-chatglm-team';
/** The prefix of every error the proxy itself answers (the clients recognise it). */
export const PROXY_ERROR_PREFIX = TEAM_PROXY_PREFIX;

/** gRPC methods of Triton's inference service that go through; the rest (repository, shared memory, trace, logging) do not. */
export const GRPC_ALLOWED = ['ServerLive', 'ServerReady', 'ModelReady', 'ServerMetadata', 'ModelMetadata', 'ModelInfer', 'ModelStreamInfer', 'ModelStatistics'];
/** HTTP paths that go through (regexes over the normalised path). */
export const HTTP_ALLOWED = [
  '^/v2$',
  '^/v2/health/(live|ready)$',
  '^/v2/models/[A-Za-z0-9_.-]+(/versions/[0-9]+)?(/(ready|generate|generate_stream|infer|stats))?$',
];

/** JSON inside an nginx single-quoted string: nginx reads \\ and \' as escapes, so both are doubled first. */
const json = (o: unknown) => JSON.stringify(o).replace(/\\/g, '\\\\').replace(/'/g, "\\'");
const errorBody = (text: string) => json({ error: `${PROXY_ERROR_PREFIX} ${text}` });

/** The replicas list the clients read (GET /team/replicas) and each one's health path, as the proxy reaches it. */
export function replicasDocument(s: TeamSpec): { replicas: { name: string; health: string }[] } {
  return { replicas: s.replicas.map((r) => ({ name: r.name, health: `/team/replicas/${r.name}/ready` })) };
}

/** The key check every server block starts with: Bearer key → digest → id (the map), or 401. */
function keyCheck(): string[] {
  return [
    `set_hmac_sha256 $team_key_mac "${KEY_DIGEST_LABEL}" $team_key;`,
    'set_encode_hex $team_key_digest $team_key_mac;',
    'if ($team_key_id = "") { return 401; }',
  ];
}

function errorPages(grpc: boolean): string[] {
  const page = (status: number, text: string, extra = '') => [
    `location @e${status} {`,
    `  default_type application/json;${extra}`,
    `  return ${status} '${errorBody(text)}';`,
    '}',
  ];
  return [
    'error_page 401 @e401;',
    'error_page 403 @e403;',
    'error_page 502 @e502;',
    'error_page 503 @e503;',
    'error_page 504 @e504;',
    ...page(401, 'missing or unknown API key (send "Authorization: Bearer <key>"; ask the team admin for a key)',
      `\n  add_header WWW-Authenticate 'Bearer realm="triton-chatglm"' always;`),
    ...page(403, grpc ? 'this gRPC method is not available through the team proxy' : 'this API is not available through the team proxy'),
    ...page(502, 'the replica serving this request failed or is unreachable; ask again (another replica takes it)'),
    ...page(503, 'no replica is available'),
    ...page(504, 'the replica did not answer in time'),
  ];
}

const indent = (lines: string[], n: number) => lines.map((l) => (l ? `${' '.repeat(n)}${l}` : l));

/** The whole nginx.conf. */
export function renderNginxConf(s: TeamSpec): string {
  const upstream = (kind: 'http' | 'grpc') => [
    `upstream triton_${kind} {`,
    // Shared by the workers: least_conn counts every worker's streams, and a failed replica is out for all of them.
    `  zone triton_${kind} 256k;`,
    '  least_conn;',
    ...s.replicas.map((r) => `  server ${replicaAddress(r)[kind]} max_fails=${s.maxFails} fail_timeout=${s.failTimeoutS}s;`),
    '  keepalive 64;',
    '}',
  ];
  const listen = s.bindAddress.includes(':') ? `[${s.bindAddress}]` : s.bindAddress;
  const t = `${s.streamTimeoutS}s`;
  const http = [
    'server {',
    `  listen ${listen}:${s.httpsPort} ssl;`,
    ...indent(keyCheck(), 2),
    ...indent(errorPages(false), 2),
    '  proxy_http_version 1.1;',
    '  proxy_set_header Connection "";',
    '  proxy_set_header Authorization "";',
    '  proxy_set_header X-Triton-Admin "";',
    '  proxy_set_header Host $host;',
    // Tokens leave as they arrive: no buffering either way; a stream may last as long as an answer does.
    '  proxy_buffering off;',
    '  proxy_request_buffering off;',
    '  proxy_cache off;',
    `  proxy_read_timeout ${t};`,
    `  proxy_send_timeout ${t};`,
    '  proxy_connect_timeout 5s;',
    '  proxy_next_upstream error timeout http_502 http_503;',
    '  client_max_body_size 16m;',
    ...HTTP_ALLOWED.map((re) => `  location ~ ${re} { proxy_pass http://triton_http$uri$is_args$args; }`),
    `  location = /team/replicas { default_type application/json; return 200 '${json(replicasDocument(s))}'; }`,
    ...s.replicas.map((r) => `  location = /team/replicas/${r.name}/ready { proxy_pass http://${replicaAddress(r).http}/v2/health/ready; proxy_connect_timeout 2s; proxy_read_timeout 3s; proxy_next_upstream off; }`),
    '  location / { return 403; }',
    '}',
  ];
  const grpc = [
    'server {',
    `  listen ${listen}:${s.grpcPort} ssl http2;`,
    ...indent(keyCheck(), 2),
    ...indent(errorPages(true), 2),
    '  grpc_set_header Authorization "";',
    '  grpc_set_header X-Triton-Admin "";',
    `  grpc_read_timeout ${t};`,
    `  grpc_send_timeout ${t};`,
    '  grpc_connect_timeout 5s;',
    `  location ~ ^/inference\\.GRPCInferenceService/(${GRPC_ALLOWED.join('|')})$ { grpc_pass grpc://triton_grpc; }`,
    '  location / { return 403; }',
    '}',
  ];
  return `${[
    `# nginx.conf of the team deployment "${s.name}", rendered from team.json by \`triton-chatglm team init\`:`,
    '# edit team.json and run init again (this file is rewritten). Served model: ' + s.model + '.',
    'load_module /usr/lib/nginx/modules/ndk_http_module.so;',
    'load_module /usr/lib/nginx/modules/ngx_http_set_misc_module.so;',
    'worker_processes auto;',
    'pid /run/nginx.pid;',
    'error_log stderr warn;',
    'events { worker_connections 4096; }',
    'http {',
    '  server_tokens off;',
    '  gzip off;',
    // The keys map's entries are 64-character digests.
    '  map_hash_bucket_size 128;',
    // One line per request with the key's id, never the key or the query string.
    `  log_format team_keys escape=json '{"time":"$time_iso8601","key_id":"$team_key_id","method":"$request_method","path":"$uri","status":$status,"bytes_sent":$bytes_sent,"bytes_received":$request_length,"duration_s":$request_time,"replica":"$upstream_addr"}';`,
    `  access_log ${PROXY_LOG_DIR}/access.log team_keys;`,
    `  ssl_certificate ${PROXY_CONF_DIR}/tls/cert.pem;`,
    `  ssl_certificate_key ${PROXY_CONF_DIR}/tls/key.pem;`,
    '  ssl_protocols TLSv1.2 TLSv1.3;',
    '  map $http_authorization $team_key {',
    '    "~^Bearer +(?<k>[A-Za-z0-9_-]{1,128})$" $k;',
    '    default "";',
    '  }',
    '  map $team_key_digest $team_key_id {',
    `    include ${PROXY_CONF_DIR}/keys.map;`,
    '    default "";',
    '  }',
    ...indent([...upstream('http'), ...upstream('grpc'), ...http, ...grpc], 2),
    '}',
  ].join('\n')}\n`;
}
