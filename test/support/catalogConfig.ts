// A config.json as the real checkpoint of a catalog model has it (model_type, architecture and the catalog's shape),
// for stand-in checkpoints: the weights check identifies the model by that shape (src/core/models/checkpointModel.ts).
// The e2e harness has the same in catalog-config.mjs.
import { catalogModel } from '../../src/core/models/catalog';

export function catalogConfigJson(id = 'chatglm3-6b'): Record<string, unknown> {
  const model = catalogModel(id);
  if (!model) throw new Error(`no catalog model ${id}`);
  return { model_type: 'chatglm', architectures: ['ChatGLMModel'], ...model.config };
}
