// The exclude glob of "Add File to Chat…": workspace.findFiles applies `files.exclude` itself when given a string
// exclude (VS Code 1.99's extHostWorkspace keeps its FilesExclude setting), but never `search.exclude`, which Quick
// Open and the Search view honour. This turns `search.exclude` into one glob. VS Code-free, so it is unit-tested.

/**
 * `{a,b,...}` from the patterns set to `true` (`false` switches one off; a `{ "when": ... }` sibling clause cannot be
 * said in a glob and is left out). VS Code's glob does not nest braces, so a pattern's own `{x,y}` group is
 * expanded first. Undefined when nothing is excluded.
 */
export function searchExcludeGlob(setting: unknown): string | undefined {
  if (!setting || typeof setting !== 'object') return undefined;
  const patterns = Object.entries(setting as Record<string, unknown>)
    .filter(([pattern, on]) => on === true && pattern.trim() !== '')
    .flatMap(([pattern]) => expandBraces(pattern));
  return patterns.length ? `{${[...new Set(patterns)].join(',')}}` : undefined;
}

/** `**\/*.{js,map}` -> `**\/*.js`, `**\/*.map` (every group, left to right; an unclosed brace stays as it is). */
export function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  const close = open < 0 ? -1 : pattern.indexOf('}', open);
  if (close < 0) return [pattern];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  return pattern.slice(open + 1, close).split(',').flatMap((choice) => expandBraces(`${head}${choice}${tail}`));
}
