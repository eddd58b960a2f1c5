// Where a selection is, as people write it: "utils.py:12–30" (1-based lines, an en dash), "utils.py:12" for one
// line. Names Explain's conversations ("Explain utils.py:12–30") and titles its threads, which are anchored on
// the same lines (selectedLines).

/** A selection by its 0-based start line and end position, as VS Code's Range gives them. */
export interface SelectionLines {
  startLine: number;
  endLine: number;
  endCharacter: number;
}

/** The 0-based lines a selection covers. */
export function selectedLines(sel: SelectionLines): { first: number; last: number } {
  // A selection of whole lines ends at column 0 of the line after them (Expand Line Selection, triple click).
  const endLine = sel.endCharacter === 0 && sel.endLine > sel.startLine ? sel.endLine - 1 : sel.endLine;
  return { first: sel.startLine, last: Math.max(sel.startLine, endLine) };
}

export function selectionLocation(fileName: string, sel: SelectionLines): string {
  const { first, last } = selectedLines(sel);
  return first === last ? `${fileName}:${first + 1}` : `${fileName}:${first + 1}–${last + 1}`;
}
