// Public surface of the container layer: settings, docker argument builders, errors, preflight (GPU memory included),
// and the ContainerManager.
export * from './errors';
export * from './settings';
export * from './dockerArgs';
export { DockerCli, type DockerCliOptions, type DockerResult, type ExecOptions, type LineStream } from './dockerCli';
export * from './inspect';
export * from './preflight';
export * from './gpuMemory';
export * from './memoryPlan';
export { locateWeights, validateWeights, weightsFix, WeightsError, type WeightsProblem } from './weights';
export * from './modelWeights';
export { checkPortFree } from './ports';
export { isLive, waitForLive, type LivenessOptions } from './liveness';
export * from './containerManager';
export { BuildStepTracker } from './buildLog';
export { detectBuilder } from './imageBuild';
export { daemonFacts, isPodman, parseRootless, runEnvironment, type DaemonFacts, type UlimitsDropped } from './runEnvironment';
export { configuredUlimits, podmanLimitsProblem, PODMAN_ROOTFUL_LIMITS, readHostLimits, type HostLimits } from './podmanLimits';
