// The chat's token estimate lives in src/core/composer (browser-safe: the chat panel's live meter uses it too).
export * from '../composer/tokenEstimate';
