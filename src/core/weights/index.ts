export * from './chatglmRepository';
export * from './downloadErrors';
export * from './downloadManifest';
export * from './hubAccess';
export * from './hubCache';
export * from './progressMeter';
export { DEFAULT_RETRY, type RetryPolicy } from './fileTransfer';
export { checkSpace, downloadWeights, planDownload, spaceMargin, type DownloadEvent, type DownloadOptions, type DownloadPlan, type DownloadResult } from './weightsDownload';
