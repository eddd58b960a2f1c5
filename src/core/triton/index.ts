// Public surface of the Triton client (imported by the container manager, CLI, VS Code adapters, benchmarks).
export * from './binaryTensor';
export * from './chatglm';
export * from './client';
export * from './errors';
export * from './prometheus';
export * from './sse';
export * from './statistics';
export * from './types';
