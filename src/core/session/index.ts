// The server/model policy behind the extension's commands and the CLI (see serverSession.ts).
import { installRepository } from '../repository';
import { ContainerManager, type ManagerOptions, type ServerSettings } from '../server';
import { TritonClient, type TritonClientOptions } from '../triton';
import { hubCacheCandidates } from '../weights/hubCache';
import { realTimers, type SessionDeps, type SessionLog } from './ports';

export * from './connection';
export * from './modelSwitch';
export * from './observe';
export * from './ports';
export * from './serverSession';
export * from './setup';
export * from './setupChecks';
export * from './sessionSettings';
export * from './sessionWeights';

/** A ContainerManager whose docker command lines go to the log. */
export function containerManager(settings: ServerSettings, log: SessionLog, options: Omit<ManagerOptions, 'onCommand'> = {}): ContainerManager {
  return new ContainerManager(settings, { ...options, onCommand: (line) => log.info(`$ ${line}`) });
}

/** The real container layer, Triton client, installer, Hub caches and timers. */
export function productionParts(log: SessionLog, manager: Omit<ManagerOptions, 'onCommand'> = {}): Pick<SessionDeps<TritonClient>, 'createClient' | 'createContainer' | 'installRepository' | 'weightsCaches' | 'timers'> {
  return {
    weightsCaches: () => hubCacheCandidates(process.env),
    createClient: (options: TritonClientOptions) => new TritonClient(options),
    createContainer: (settings: ServerSettings) => containerManager(settings, log, manager),
    installRepository,
    timers: realTimers,
  };
}
