// The chat's token estimate lives in src/core/tokens (browser-safe: the chat panel's live meter uses it too).
export * from '../tokens/tokenEstimate';
