// Public surface of the OpenAI-compatible endpoint (used by the CLI's serve-openai and the extension's setting).
export * from './errors';
export * from './http';
export * from './mapping';
export * from './schemas';
export * from './server';
export * from './endpointSettings';
