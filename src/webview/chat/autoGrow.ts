// A textarea that grows with its text (up to its CSS max-height, then it scrolls), as chat inputs do. It is sized
// by its `rows`: no inline style, which the CSP would refuse in markup and the panel keeps free of altogether.
export function autoGrow(textarea: HTMLTextAreaElement): () => void {
  const fit = () => {
    const style = getComputedStyle(textarea);
    const line = parseFloat(style.lineHeight) || 18;
    const padding = (parseFloat(style.paddingTop) || 0) + (parseFloat(style.paddingBottom) || 0);
    textarea.rows = 1; // measure the text's own height, not the box's
    textarea.rows = Math.max(1, Math.round((textarea.scrollHeight - padding) / line));
  };
  textarea.addEventListener('input', fit);
  return fit;
}
