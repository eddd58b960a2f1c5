// The CLI's memory of accepted licences (the extension keeps them in its globalState): one JSON file of model ids
// under the CLI's data folder. Unreadable or malformed: nothing accepted (the question comes again, nothing lost).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

const FILE = 'accepted-licenses.json';
const schema = z.object({ version: z.literal(1), models: z.array(z.string()) });

async function read(dir: string): Promise<string[]> {
  try {
    const parsed = schema.safeParse(JSON.parse(await readFile(join(dir, FILE), 'utf8')));
    return parsed.success ? parsed.data.models : [];
  } catch {
    return [];
  }
}

export async function licenseAccepted(dir: string, modelId: string): Promise<boolean> {
  return (await read(dir)).includes(modelId);
}

export async function rememberLicense(dir: string, modelId: string): Promise<void> {
  const models = await read(dir);
  if (models.includes(modelId)) return;
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${FILE}.tmp`);
  await writeFile(tmp, `${JSON.stringify({ version: 1, models: [...models, modelId] })}\n`);
  await rename(tmp, join(dir, FILE));
}
