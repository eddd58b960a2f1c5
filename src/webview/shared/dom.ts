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
