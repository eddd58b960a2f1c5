// The setup checklist's model choice: each catalog model with what a person needs to pick one — its download size,
// whether it fits the GPU the setup check measured and in which precision (the memory plan's own verdict, the one
// the load makes), and its licence (name, key terms, link). Words are the front end's; this holds facts.
import type { ModelSettings } from '../repository/renderConfig';
import { planDtype, planForGpu, planModelConfig, planSettings, type WeightsKind } from '../server/memoryPlan';
import { MODEL_CATALOG, type CatalogModel } from './catalog';

export type ModelFit =
  /** Runs on the measured GPU: weights kept as they are (`none`) or stored in int8; the compute dtype. */
  | { kind: 'runs'; weights: WeightsKind; dtype: string; neededBytes: number; freeBytes: number }
  | { kind: 'too-small'; neededBytes: number; freeBytes: number }
  /** No GPU was measured (nvidia-smi missing, or the check has not run). */
  | { kind: 'unknown' };

export interface ModelChoice {
  id: string;
  displayName: string;
  chosen: boolean;
  /** Bytes a download fetches (the catalog's figure for its revision); undefined when unknown. */
  downloadBytes: number | undefined;
  fit: ModelFit;
  license: CatalogModel['license'];
}

/**
 * Every catalog model, in catalog order, sized for `freeBytes` (the first selected GPU's free memory, per model
 * copy) under the model settings (batch rows, context, dtype, quantization).
 */
export function modelChoices(chosenId: string, freeBytes: number | undefined, settings: Partial<ModelSettings>): ModelChoice[] {
  return MODEL_CATALOG.models.map((m) => ({
    id: m.id,
    displayName: m.displayName,
    chosen: m.id === chosenId,
    downloadBytes: m.downloadBytes ?? undefined,
    fit: fitOf(m, freeBytes, settings),
    license: m.license,
  }));
}

function fitOf(m: CatalogModel, freeBytes: number | undefined, settings: Partial<ModelSettings>): ModelFit {
  if (freeBytes === undefined) return { kind: 'unknown' };
  const config = planModelConfig(m.id);
  if (!config) return { kind: 'unknown' };
  // `auto` is the model's own weights dtype (GLM-4 was trained in bfloat16), as the engine resolves it on a GPU.
  const dtype = settings.dtype === undefined || settings.dtype === 'auto' ? m.weightsDtype : planDtype(settings.dtype);
  const verdict = planForGpu(freeBytes, planSettings({ ...settings, dtype }, config), config);
  if (verdict.kind === 'runs') return { kind: 'runs', weights: verdict.plan.quantization, dtype, neededBytes: verdict.plan.total, freeBytes };
  return { kind: 'too-small', neededBytes: verdict.needed.total, freeBytes };
}
