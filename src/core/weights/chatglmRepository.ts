// What "the ChatGLM3-6B weights" are on the Hub: the repository (and the name it now also answers to), the
// snapshot our checks against ChatGLM3's own code used, which files of a revision we fetch, and the listing rules
// (a listing is input from the network). The rules apply to the files we would fetch: one of those whose name could
// leave the folder, or is not a plain name, refuses the whole listing; every other entry (docs/说明.md, a folder we
// never fetch) is ignored and only counted, so a harmless file added upstream cannot stop a download.
import { escapeForMessage } from '../text/escapeForMessage';

/** The repository we download, and the names a Hugging Face cache may hold it under. */
export const CHATGLM_REPO = 'THUDM/chatglm3-6b';
export const CHATGLM_REPO_ALIASES: readonly string[] = [CHATGLM_REPO, 'zai-org/chatglm3-6b'];
export const DEFAULT_REVISION = 'main';
export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/**
 * The snapshot that was tested (../shared/reference/chatglm3-6b-snapshot.json: path, size, sha256). A download of
 * another commit is accepted and said to be newer; this one lets the checklist name it and its total size.
 */
export const TESTED_SNAPSHOT = {
  commit: '456aa875cf1f46623006edaa23103774ea9c0eae',
  totalBytes: 12488383085,
  files: [
    ['.gitattributes', 1519, '11ad7efa24975ee4b0c3c3a38ed18737f0658a5f75a0a96787b576a78a023361'],
    ['MODEL_LICENSE', 4133, '3bce513e070a59114b35a99f0d5a66afecb86f6b07898cd924a8d6155e61994c'],
    ['README.md', 7376, 'bf1edbb570411c299095aefeb10a239c5ac04cb59fe1b272635a4c5eb4cadc77'],
    ['config.json', 1317, '415b51f6043ef388860b093fad9c52f4898c426af733871f45e2e0c8b6e1d61e'],
    ['configuration_chatglm.py', 2332, '351ba435758670b27c160b7657c7ab1d32053c4e8c0606a5a9b8f9908249dec8'],
    ['modeling_chatglm.py', 55678, '440d89faea5c3ea47fd2778abde970008d170cacb743aafcaf822cdaa5627ee0'],
    ['pytorch_model-00001-of-00007.bin', 1827781090, '4d5567466e89625dbd10e51c69a02982f233a10108cf232a379defdbb065ae0b'],
    ['pytorch_model-00002-of-00007.bin', 1968299480, '4ad41534016ac4a2431fa2d4b08efbe28f963744135ec52b2ea13cc86730fa2a'],
    ['pytorch_model-00003-of-00007.bin', 1927415036, 'a2be9b17c332a8345e787953d4879caee4747ad4b263f013aa3c4654c94c3d24'],
    ['pytorch_model-00004-of-00007.bin', 1815225998, 'b5526891e1b4c8edd2e3688df5156aa107e2140fe7e3f9d0d54f9cbe3b6ee3b5'],
    ['pytorch_model-00005-of-00007.bin', 1968299544, '84bb18a476f74beaf4d941733bd1c475791eba799b228f78d0165de989cb7a40'],
    ['pytorch_model-00006-of-00007.bin', 1927415036, '1181875a2dc30fba968d72d0fc4628b9a60d3866bf680eb14b9822b5b504830f'],
    ['pytorch_model-00007-of-00007.bin', 1052808542, '1271b638dc0a88206d1c7a51bcaa862410eb56f3e59fd0068a96e96cb5e3f4f0'],
    ['pytorch_model.bin.index.json', 20437, 'cd61a351c1f7432a0e9a2865633d6690765c9a2087af71babfaa29881b2a13aa'],
    ['quantization.py', 14692, '7a690346ab3866ebdc361fb5d7389ecf6e3e8fe62f50868d28a5bcbff52ecd20'],
    ['tokenization_chatglm.py', 12261, 'f3e7e26af20b222d107f888a3db305a1a25ea74c16952d36257e0e606d1780f6'],
    ['tokenizer.model', 1018370, 'e7dc4c393423b76e4373e5157ddc34803a0189ba96b21ddbb40269d31468a6f2'],
    ['tokenizer_config.json', 244, '5cfb2d80badae9a152ed0c44293fd592774ecaebc593271a6b02413d7afa24a4'],
  ] as ReadonlyArray<readonly [path: string, size: number, sha256: string]>,
} as const;

/** Whether a commit is the tested one ("a newer snapshot than the one tested" otherwise). */
export function isTestedCommit(commit: string | undefined): boolean {
  return commit === TESTED_SNAPSHOT.commit;
}

/** One file of a revision as the listing reports it. */
export interface HubFile {
  path: string;
  size: number;
  /** The LFS object id (sha256) for LFS files. */
  sha256?: string;
  /** The git blob id (sha1 of "blob <size>\0" + content) for files kept in git. */
  gitOid?: string;
}

/** A listing we refuse, with the entry that made us refuse it. */
export class ListingError extends Error {
  override readonly name = 'ListingError';
  readonly entry: string;
  constructor(entry: string, reason: string) {
    const shown = escapeForMessage(entry);
    super(`The Hub's file list was refused: "${shown}" ${reason}.`);
    this.entry = shown;
  }
}

const SEGMENT = /^[A-Za-z0-9._+-][A-Za-z0-9._+ -]*$/;

/**
 * Throws unless every entry is a relative path inside the repository: no `..` or `.` segment, no absolute path, no
 * backslash or drive letter, no control characters; sizes are whole non-negative numbers; hashes are hex. Applied
 * to the files selected for download (selectFiles), not to the whole listing.
 */
export function checkListing(files: readonly HubFile[]): void {
  const seen = new Set<string>();
  for (const f of files) {
    const p = f.path;
    if (typeof p !== 'string' || !p) throw new ListingError(String(p), 'has no name');
    if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.includes('\\')) throw new ListingError(p, 'is not a relative path');
    const segments = p.split('/');
    if (segments.some((s) => s === '..' || s === '.' || s === '')) throw new ListingError(p, 'leaves the repository folder');
    if (segments.some((s) => !SEGMENT.test(s))) throw new ListingError(p, 'has characters a file name here cannot have');
    if (!Number.isSafeInteger(f.size) || f.size < 0) throw new ListingError(p, 'has no valid size');
    if (f.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(f.sha256)) throw new ListingError(p, 'has an invalid sha256');
    if (f.gitOid !== undefined && !/^[0-9a-f]{40}$/.test(f.gitOid)) throw new ListingError(p, 'has an invalid git object id');
    if (f.sha256 === undefined && f.gitOid === undefined) throw new ListingError(p, 'has no hash to verify it by');
    if (seen.has(p)) throw new ListingError(p, 'is listed twice');
    seen.add(p);
  }
}

/**
 * Files besides the weights: the config, the tokenizer, the license. Never the repository's Python files (its
 * "remote code"): the engine has its own model and tokenizer code and runs nothing from a weights folder.
 */
const SUPPORT_FILE = /^(?:[^/]+\.json|tokenizer\.model|[^/]+\.tiktoken|MODEL_LICENSE|LICENSE(?:\.[^/]+)?)$/;
const SAFETENSORS_SHARD = /^[^/]+\.safetensors$/;
const BIN_SHARD = /^pytorch_model(?:-\d+-of-\d+)?\.bin$/;
const WEIGHT_INDEXES = ['model.safetensors.index.json', 'pytorch_model.bin.index.json'];

/** Code-unit order: the same on every machine and locale. */
const byPath = (a: HubFile, b: HubFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

export type WeightFormat = 'safetensors' | 'bin';

export interface FileSelection {
  format: WeightFormat;
  /** Support files first, then the index, then the shards (small files land first: the checks see them early). */
  files: HubFile[];
  /** Entries of the listing that are not fetched (other folders, other files): never checked, only counted. */
  ignored: number;
}

/**
 * Names the downloader keeps its own state under (downloadManifest.ts): never taken from a listing, whatever it
 * says. The current manifest's name starts with `~`, which the listing rules refuse besides.
 */
export const RESERVED_NAMES: readonly string[] = ['~triton-chatglm-download.json', '~triton-chatglm-download.json.tmp', '.triton-chatglm-download.json', '.triton-chatglm-download.json.tmp'];

/** Whether an entry could be one we fetch: a top-level name matching one of the patterns below, not ours. */
function wanted(f: HubFile): boolean {
  const p = f.path as unknown;
  if (typeof p !== 'string' || !p || p.includes('/') || RESERVED_NAMES.includes(p)) return false;
  return SUPPORT_FILE.test(p) || SAFETENSORS_SHARD.test(p) || BIN_SHARD.test(p);
}

/** What a model's repository must hold (the catalog's `files`): its required files and its weight formats, preferred first. */
export interface RepositoryFiles {
  repo: string;
  required: readonly string[];
  weights: readonly WeightFormat[];
}

/** ChatGLM3-6B's, as before the catalog: config and tokenizer, safetensors else bin. */
export const CHATGLM_FILES: RepositoryFiles = { repo: CHATGLM_REPO, required: ['config.json', 'tokenizer.model'], weights: ['safetensors', 'bin'] };

/**
 * The files to fetch: config, tokenizer files and license (no Python files), then one weight format only — the
 * first of `spec.weights` the revision has (`*.safetensors` with their index, or `pytorch_model-*.bin` with
 * its index). Top-level files only. The listing rules (checkListing) hold for these; the other entries are ignored.
 * A revision without a required file or a weight format the model allows is refused before anything is fetched.
 */
export function selectFiles(listing: readonly HubFile[], spec: RepositoryFiles = CHATGLM_FILES): FileSelection {
  const top = listing.filter(wanted);
  checkListing(top);
  const shardsOf = (f: WeightFormat) => top.filter((x) => (f === 'safetensors' ? SAFETENSORS_SHARD : BIN_SHARD).test(x.path));
  const format = spec.weights.find((f) => shardsOf(f).length > 0);
  if (!format) {
    const names = spec.weights.map((f) => (f === 'safetensors' ? '*.safetensors' : 'pytorch_model*.bin'));
    throw new ListingError(spec.repo, names.length > 1 ? `has neither ${names.join(' nor ')} weight files` : `has no ${names[0]} weight files`);
  }
  const missing = spec.required.find((name) => !top.some((f) => f.path === name));
  if (missing) throw new ListingError(spec.repo, `has no ${missing}`);
  const index = format === 'safetensors' ? 'model.safetensors.index.json' : 'pytorch_model.bin.index.json';
  const support = top.filter((f) => SUPPORT_FILE.test(f.path) && !WEIGHT_INDEXES.includes(f.path));
  const indexFile = top.filter((f) => f.path === index);
  const shards = shardsOf(format).slice().sort(byPath);
  const files = [...support.sort(byPath), ...indexFile, ...shards];
  return { format, files, ignored: listing.length - top.length };
}

/** Shard names a weight index (`*.index.json`) refers to, or undefined when it is not one. */
export function indexShards(indexJson: unknown): string[] | undefined {
  if (typeof indexJson !== 'object' || indexJson === null) return undefined;
  const map = (indexJson as { weight_map?: unknown }).weight_map;
  if (typeof map !== 'object' || map === null) return undefined;
  return [...new Set(Object.values(map as Record<string, unknown>).filter((v): v is string => typeof v === 'string'))];
}
