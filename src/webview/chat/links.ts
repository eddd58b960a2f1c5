// Links in answers never navigate the panel: rendered links carry no href (markdown.ts keeps the URL in
// data-href), and every way of following one (click, middle click, Enter, dragging it out) is stopped here; the
// activations become one validated `openLink` message, and the host decides what opens.
import { LIMITS, type WebviewToHost } from '../../protocol';
import { LINK_ATTR } from './markdown';

function linkOf(target: EventTarget | null): HTMLAnchorElement | undefined {
  const node = target instanceof Element ? target : target instanceof Node ? target.parentElement : null;
  return (node?.closest('a') as HTMLAnchorElement | null) ?? undefined;
}

/** Installs the handlers on `root` (capture phase, so nothing else sees the event first). */
export function interceptLinks(root: HTMLElement, post: (message: WebviewToHost) => void): void {
  const open = (a: HTMLAnchorElement) => {
    const url = a.getAttribute(LINK_ATTR);
    if (!url || url.length > LIMITS.url) return;
    post({ type: 'openLink', url, text: (a.textContent ?? '').trim().slice(0, LIMITS.linkText) });
  };
  // A click (main button) or a middle click opens; any other button only loses its default.
  const onPointer = (opening: number) => (e: MouseEvent) => {
    const a = linkOf(e.target);
    if (!a) return;
    e.preventDefault();
    if (e.button === opening) open(a);
  };
  root.addEventListener('click', onPointer(0), { capture: true });
  root.addEventListener('auxclick', onPointer(1), { capture: true });
  root.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    const a = linkOf(e.target);
    if (!a || e.target !== a) return;
    e.preventDefault();
    open(a);
  }, { capture: true });
  root.addEventListener('dragstart', (e) => {
    if (linkOf(e.target)) e.preventDefault();
  }, { capture: true });
}
