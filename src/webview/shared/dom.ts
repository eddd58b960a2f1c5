// Small DOM helpers: elements are built with properties and text nodes only, never from HTML strings.
type Attrs = Record<string, string | undefined>;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, v);
  for (const child of children) node.append(child);
  return node;
}

export function button(label: string, action: string, attrs: Attrs = {}): HTMLButtonElement {
  return el('button', { type: 'button', 'data-action': action, ...attrs }, label);
}

/** A codicon (the font VS Code's own icons use; its stylesheet is bundled with the page). */
export function icon(name: string): HTMLElement {
  return el('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

/** A button showing only an icon: `label` is its accessible name, `tooltip` (default: the label) its hover text. */
export function iconButton(name: string, action: string, label: string, attrs: Attrs = {}, tooltip = label): HTMLButtonElement {
  const { class: extra, ...rest } = attrs;
  return el('button', { type: 'button', 'data-action': action, class: extra ? `icon-button ${extra}` : 'icon-button', 'aria-label': label, title: tooltip, ...rest }, icon(name));
}
