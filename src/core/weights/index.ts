export * from './chatglmRepository';
export * from './downloadErrors';
export * from './downloadManifest';
export * from './hubAccess';
export * from './hubCache';
export * from './progressMeter';
export { DEFAULT_RETRY, parseRetryAfter, retryDelayMs, type RetryInfo, type RetryPolicy } from './hubRetry';
export { checkSpace, downloadWeights, planDownload, spaceMargin, type DownloadEvent, type DownloadOptions, type DownloadPlan, type DownloadResult } from './weightsDownload';
