// A config.json as the real checkpoint of a catalog model has it (model_type, architecture and the catalog's shape),
// for stand-in checkpoints: the weights check identifies the model by that shape (src/core/models/checkpointModel.ts).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CATALOG = fileURLToPath(new URL('../../triton/model_repository/chatglm3-6b/1/chatglm/catalog.json', import.meta.url));

/** The config.json fields of catalog model `id` (chatglm3-6b by default). */
export function catalogConfigJson(id = 'chatglm3-6b') {
  const model = JSON.parse(readFileSync(CATALOG, 'utf8')).models.find((m) => m.id === id);
  if (!model) throw new Error(`no catalog model ${id}`);
  return { model_type: 'chatglm', architectures: ['ChatGLMModel'], ...model.config };
}
