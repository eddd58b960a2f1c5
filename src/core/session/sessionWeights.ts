// The session's settings with the chosen model's weights resolved (src/core/server/modelWeights.ts): the folder a
// start mounts, the setup checks examine and the load's config.pbtxt names. Async (it reads the disk), so it is
// applied where an operation begins rather than in the synchronous settings mapping.
import { catalogModel } from '../models/catalog';
import { weightsMount } from '../server/dockerArgs';
import { effectiveWeightsPath, resolveModelWeights } from '../server/modelWeights';
import type { SessionSettings } from './sessionSettings';

export async function withModelWeights(settings: SessionSettings, cacheDirs: readonly string[]): Promise<SessionSettings> {
  const model = catalogModel(settings.server.model);
  // No cache to look in: only the setting counts, which is what is configured already.
  if (settings.mode !== 'managed' || !model || cacheDirs.length === 0) return settings;
  const configured = settings.server.weightsPath;
  const path = effectiveWeightsPath(await resolveModelWeights(model, configured, cacheDirs), configured);
  if (path === configured) return settings;
  return {
    ...settings,
    server: { ...settings.server, weightsPath: path },
    model: { ...settings.model, weightsPath: weightsMount(path, model.id).weightsPath },
  };
}
