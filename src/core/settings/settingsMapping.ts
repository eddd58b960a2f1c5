// Maps the extension's settings onto the core's inputs: the container settings of the ContainerManager and the
// model settings rendered into config.pbtxt.
import type { ModelSettings } from '../repository';
import { weightsMount } from '../server/dockerArgs';
import type { ServerSettings } from '../server';
import type { ExtensionSettings } from './settingsSchema';

/** Every field, as configured: `resolveSettings` validates them before a start. */
export function toServerSettings(s: ExtensionSettings, repositoryPath: string): ServerSettings {
  return {
    dockerPath: s.dockerPath,
    image: s.image,
    containerName: s.containerName,
    httpPort: s.httpPort,
    grpcPort: s.grpcPort,
    metricsPort: s.metricsPort,
    bindAddress: s.bindAddress,
    gpuIds: modelGpus(s).length === 0 ? 'all' : [...modelGpus(s)],
    shmSize: s.shmSize,
    raiseUlimits: s.raiseUlimits,
    weightsPath: s.weightsPath,
    model: s.model,
    repositoryPath,
    extraEnv: {},
  };
}

/** The host GPUs of the model: `gpus`, else the deprecated `gpuIds` (an old configuration); empty: all GPUs. */
export function modelGpus(s: Pick<ExtensionSettings, 'gpus' | 'gpuIds'>): readonly string[] {
  return s.gpus.length > 0 ? s.gpus : s.gpuIds;
}

/**
 * Docker renumbers the GPUs it passes to the container from 0, so the model's instance group names container
 * ids: one per selected GPU, or GPU 0 when all GPUs are passed (one copy of a 13 GB model is the sensible
 * default; more copies are what an explicit GPU list is for: one instance on each).
 */
export function containerGpuIds(hostGpuIds: readonly string[]): number[] {
  return hostGpuIds.length === 0 ? [0] : hostGpuIds.map((_, i) => i);
}

export function toModelSettings(s: ExtensionSettings): Partial<ModelSettings> {
  return {
    model: s.model,
    engine: s.engine,
    quantization: s.quantization,
    maxBatchSize: s.maxBatchSize,
    queueDelayMs: s.queueDelayMs,
    maxQueueSize: s.maxQueueSize,
    // Deprecated: 1 unless an old configuration set more copies per GPU.
    instanceCount: s.instanceCount,
    streaming: s.streaming,
    gpuIds: containerGpuIds(modelGpus(s)),
    // The folder as the container sees it (a Hub cache snapshot inside its mounted repository folder).
    weightsPath: weightsMount(s.weightsPath, s.model).weightsPath,
  };
}
