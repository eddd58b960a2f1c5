// A team deployment: N tritonservers behind an nginx proxy with TLS and per-user keys (docs/TEAM.md).
export * from './keys';
export * from './nginxConf';
export * from './teamDocker';
export * from './teamFiles';
export * from './teamSpec';
export * from './tls';
export * from './teamOps';
export * from './replicaHealth';
