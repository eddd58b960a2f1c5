// CodeGeeX4's ###LANGUAGE: tag for an editor language id. THUDM's infilling guide (guides/Infilling_guideline.md in
// THUDM/CodeGeeX4) asks for the language's name, "generally" with a capital first letter, and for a blank tag when
// unsure; its list of main languages is in guides/Repository_tasks_guideline_zh.md. Unknown ids stay blank.
const TAGS: Record<string, string> = {
  python: 'Python', javascript: 'JavaScript', javascriptreact: 'JavaScript', typescript: 'TypeScript', typescriptreact: 'TypeScript',
  go: 'Go', rust: 'Rust', java: 'Java', kotlin: 'Kotlin', scala: 'Scala', c: 'C', cpp: 'C++', 'cuda-cpp': 'Cuda', csharp: 'C#',
  'objective-cpp': 'Objective-C++', ruby: 'Ruby', php: 'PHP', swift: 'Swift', dart: 'Dart', haskell: 'Haskell', lua: 'Lua',
  pascal: 'Pascal', r: 'R', shellscript: 'Shell', sql: 'SQL', html: 'HTML', css: 'CSS', scss: 'SCSS', json: 'JSON',
  jsonc: 'JSON', xml: 'XML', yaml: 'YAML', toml: 'TOML', markdown: 'Markdown', latex: 'TeX', tex: 'TeX', vue: 'Vue',
  plaintext: '',
};

export function languageTag(languageId: string): string {
  return TAGS[languageId] ?? '';
}
