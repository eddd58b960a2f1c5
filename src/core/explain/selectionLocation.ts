// Where a selection is, as people write it: "utils.py:12–30" (1-based lines, an en dash), "utils.py:12" for one
// line. Names Explain's conversations ("Explain utils.py:12–30") and can title its threads.

/** A selection by its 0-based start line and end position, as VS Code's Range gives them. */
export interface SelectionLines {
  startLine: number;
  endLine: number;
  endCharacter: number;
}

export function selectionLocation(fileName: string, sel: SelectionLines): string {
  // A selection of whole lines ends at column 0 of the line after them (Expand Line Selection, triple click).
  const endLine = sel.endCharacter === 0 && sel.endLine > sel.startLine ? sel.endLine - 1 : sel.endLine;
  const first = sel.startLine + 1;
  const last = Math.max(first, endLine + 1);
  return first === last ? `${fileName}:${first}` : `${fileName}:${first}–${last}`;
}
