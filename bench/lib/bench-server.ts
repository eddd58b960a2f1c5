// Typed access, from TypeScript benchmarks, to the JavaScript helper that starts the test tritonserver (plain .mjs so
// the orchestrator can use it without a TypeScript loader; imported dynamically like the integration tests do).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface BenchServer {
  label: string;
  maxBatchSize: number;
  url: string;
  serverVersion: string;
  stop(): Promise<void>;
  batchStats(): Promise<{ inference_count: number; execution_count: number; executions_by_batch_size: Record<string, number>; queue_ms_mean: number }>;
}

interface TestServersModule {
  startBenchServer(options: { label: string; maxBatchSize: number; maxQueueSize?: number; queueDelayUs?: number; stepDelayMs?: number; env?: Record<string, string> }): Promise<BenchServer>;
  modelName: string;
}

export async function loadTestServers(): Promise<TestServersModule> {
  return (await import(pathToFileURL(join(__dirname, 'test-servers.mjs')).href)) as TestServersModule;
}

interface StatsModule {
  median(values: number[]): number;
  summarize(values: number[], digits?: number): { value: number; median_of: number; min: number; max: number };
  pairedRatios(a: number[], b: number[]): number[];
  round(x: number, digits?: number): number;
}

export async function loadStats(): Promise<StatsModule> {
  return (await import(pathToFileURL(join(__dirname, 'stats.mjs')).href)) as StatsModule;
}
