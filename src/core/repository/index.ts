// Public surface of the repository installer (config.pbtxt rendering, warmup files, install into storage).
export * from './install';
export * from './renderConfig';
export * from './warmup';
