// The session's view of the settings: one mapping from the extension's settings, used by the extension (from
// VS Code's configuration) and the CLI (from its flags and environment).
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
  /** The packaged model repository, and where it is rendered (mounted read-only as /models). */
  repository: { source: string; destination: string };
  external: { url: string; headers: Record<string, string>; metricsUrl?: string; adminKey?: string };
  requestTimeoutMs: number;
}

export interface RepositoryPaths {
  /** triton/model_repository of the package. */
  source: string;
  destination: string;
}

export function toSessionSettings(s: ExtensionSettings, repository: RepositoryPaths, externalAdminKey?: string): SessionSettings {
  return {
    mode: s.serverMode,
    server: toServerSettings(s, repository.destination),
    model: toModelSettings(s),
    repository: { ...repository },
    external: {
      url: s.externalUrl,
      headers: s.externalHeaders,
      ...(s.externalMetricsUrl ? { metricsUrl: s.externalMetricsUrl } : {}),
      ...(externalAdminKey ? { adminKey: externalAdminKey } : {}),
    },
    requestTimeoutMs: s.requestTimeoutSeconds * 1000,
  };
}
