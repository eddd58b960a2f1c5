// What the GPUs of this machine have free, read from `nvidia-smi` on the host before the container starts, and
// whether one copy of ChatGLM3-6B per selected GPU fits. Where nvidia-smi is not installed (a CPU-only client of
// a remote Docker host, Docker Desktop on macOS) the answer is "unknown", never a guess.
import { loadExeca } from './dockerCli';
import { ServerError } from './errors';
import type { ServerSettings } from './settings';

/** ChatGLM3's README: "about 13GB of VRAM" for the fp16 model (weights, CUDA context, a few requests' cache). */
export const CHATGLM3_FP16_MIB = 13_000;

export interface GpuMemory {
  /** Host index, as `--gpus device=N` and nvidia-smi number it. */
  index: string;
  uuid: string;
  name: string;
  totalMiB: number;
  freeMiB: number;
}

/** Why GPU memory cannot be known before the start. */
export type GpuUnknownReason = 'no-nvidia-smi' | 'nvidia-smi-failed' | 'mig';

/** What a probe found: the GPUs, or why it could not tell (`note`: the evidence, in English). */
export type GpuProbe = { gpus: GpuMemory[] } | { unknown: GpuUnknownReason; note: string };

export type ProbeGpus = (signal?: AbortSignal) => Promise<GpuProbe>;

export const NVIDIA_SMI_ARGS = ['--query-gpu=index,uuid,name,memory.total,memory.free', '--format=csv,noheader,nounits'];

/** `nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.free --format=csv,noheader,nounits` → rows. */
export function parseNvidiaSmi(stdout: string): GpuMemory[] {
  const gpus: GpuMemory[] = [];
  for (const line of stdout.split('\n')) {
    const cells = line.split(',').map((c) => c.trim());
    if (cells.length < 5) continue;
    const [index, uuid, name, total, free] = cells as [string, string, string, string, string];
    const totalMiB = Number(total);
    const freeMiB = Number(free);
    if (!/^\d+$/.test(index) || !Number.isFinite(totalMiB) || !Number.isFinite(freeMiB)) continue;
    gpus.push({ index, uuid, name, totalMiB, freeMiB });
  }
  return gpus;
}

/** The GPUs a start would give the model: the listed ones, or (all GPUs passed) the first, where its one copy goes. */
export function selectedGpus(gpus: readonly GpuMemory[], gpuIds: ServerSettings['gpuIds']): { selected: GpuMemory[]; missing: string[] } {
  if (gpuIds === 'all') return { selected: gpus.slice(0, 1), missing: [] };
  const selected: GpuMemory[] = [];
  const missing: string[] = [];
  for (const id of gpuIds) {
    const gpu = gpus.find((g) => g.index === id || g.uuid === id);
    if (gpu) selected.push(gpu);
    else missing.push(id);
  }
  return { selected, missing };
}

/**
 * The verdict on GPU memory: undefined when every selected GPU has room for `requiredMiB`; otherwise a warning
 * (another program may free memory before the load, so it never blocks a start).
 */
export function gpuMemoryProblem(gpus: readonly GpuMemory[], gpuIds: ServerSettings['gpuIds'], requiredMiB: number): ServerError | undefined {
  if (gpus.length === 0) {
    return new ServerError({ code: 'gpu-memory-low', message: 'nvidia-smi lists no GPU on this machine.', fix: `Check the NVIDIA driver (\`nvidia-smi\`); the model needs a GPU with about ${gib(requiredMiB)} GB of memory.` });
  }
  const { selected, missing } = selectedGpus(gpus, gpuIds);
  if (missing.length) {
    return new ServerError({ code: 'gpu-memory-low', message: `No GPU with the id ${missing.join(', ')} on this machine (nvidia-smi lists ${gpus.map((g) => g.index).join(', ')}).`, fix: 'Correct the GPU ids in the settings, or leave them empty to use the first GPU.' });
  }
  const short = selected.filter((g) => g.freeMiB < requiredMiB);
  if (short.length === 0) return undefined;
  const list = short.map((g) => `GPU ${g.index} (${g.name}) has ${gib(g.freeMiB)} GB free of ${gib(g.totalMiB)} GB`).join('; ');
  const tooSmall = short.some((g) => g.totalMiB < requiredMiB);
  return new ServerError({
    code: 'gpu-memory-low',
    message: `${list}; the model needs about ${gib(requiredMiB)} GB.`,
    fix: tooSmall
      ? 'Choose a GPU with more memory in the settings (GPU ids).'
      : 'Close the programs that use the GPU (see `nvidia-smi`), or choose another GPU in the settings (GPU ids).',
  });
}

/** MiB → GB with one decimal, as nvidia-smi users read it. */
export function gib(mib: number): string {
  return (mib / 1024).toFixed(1);
}

/** The host's nvidia-smi, when there is one. */
export const probeGpusWithNvidiaSmi: ProbeGpus = async (signal) => {
  const { execa } = await loadExeca();
  const r = await execa('nvidia-smi', NVIDIA_SMI_ARGS, { reject: false, stdin: 'ignore', cancelSignal: signal, timeout: 15_000 });
  if (r.exitCode === undefined && r.code === 'ENOENT') return { unknown: 'no-nvidia-smi', note: 'nvidia-smi is not installed on this machine.' };
  if (r.exitCode !== 0) return { unknown: 'nvidia-smi-failed', note: `nvidia-smi failed: ${String(r.stderr || r.stdout).split('\n')[0] || `exit code ${String(r.exitCode)}`}` };
  return { gpus: parseNvidiaSmi(String(r.stdout)) };
};
