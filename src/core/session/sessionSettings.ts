// The session's view of the settings: one mapping from the extension's settings, used by the extension (from
// VS Code's configuration) and the CLI (from its flags and environment).
import { chosenModel, modelEntryName } from '../models/choice';
import type { ModelSettings } from '../repository';
import type { ServerSettings } from '../server';
import { toModelSettings, toServerSettings } from '../settings/settingsMapping';
import type { ExtensionSettings } from '../settings/settingsSchema';
import type { ServerMode } from '../state/lifecycle';

export interface SessionSettings {
  mode: ServerMode;
  /** The managed container as configured (validated only when it is started). */
  server: ServerSettings;
  model: Partial<ModelSettings>;
  /** The chosen catalog model's Triton name (its repository entry): what load, unload, stats and infer address. */
  modelName: string;
  /** The packaged model repository, and where it is rendered (mounted read-only as /models). */
  repository: { source: string; destination: string };
  /** `apiKey`: a team proxy's key (sent as `Authorization: Bearer`); `caFile`: a PEM file of the CA to trust. */
  external: { url: string; headers: Record<string, string>; metricsUrl?: string; adminKey?: string; apiKey?: string; caFile?: string };
  requestTimeoutMs: number;
  /** Start ChatGLM when the extension activates and the setup is complete. */
  autoStart: boolean;
}

export interface RepositoryPaths {
  /** triton/model_repository of the package. */
  source: string;
  destination: string;
}

export function toSessionSettings(settings: ExtensionSettings, repository: RepositoryPaths, externalAdminKey?: string, externalApiKey?: string): SessionSettings {
  return {
    mode: settings.serverMode,
    server: toServerSettings(settings, repository.destination),
    model: toModelSettings(settings),
    modelName: modelEntryName(chosenModel(settings.model)),
    repository: { ...repository },
    external: {
      url: settings.externalUrl,
      headers: settings.externalHeaders,
      ...(settings.externalMetricsUrl ? { metricsUrl: settings.externalMetricsUrl } : {}),
      ...(externalAdminKey ? { adminKey: externalAdminKey } : {}),
      ...(externalApiKey ? { apiKey: externalApiKey } : {}),
      ...(settings.externalCaFile ? { caFile: settings.externalCaFile } : {}),
    },
    requestTimeoutMs: settings.requestTimeoutSeconds * 1000,
    autoStart: settings.autoStart,
  };
}
