// The --vscode-* variables VS Code sets in a webview for Light+, Dark+, Dark High Contrast and Light High Contrast,
// captured from code-server 4.99.4 (VS Code 1.99.3) by e2e journey 11a (E2E_UPDATE_THEME_VARIABLES=1 node
// test/e2e/run.mjs --only=theme rewrites ./themes/*.json), and a page script that puts one on a webview page as VS
// Code does: the variables on the root element's style, the theme's class on <body>.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

export interface CapturedTheme {
  theme: string;
  bodyClass: string;
  variables: Record<string, string>;
}

export const THEME_FILES = ['light-plus.json', 'dark-plus.json', 'dark-high-contrast.json', 'light-high-contrast.json'] as const;

export function loadTheme(file: (typeof THEME_FILES)[number]): CapturedTheme {
  return JSON.parse(readFileSync(join(__dirname, 'themes', file), 'utf8')) as CapturedTheme;
}

export const isHighContrast = (theme: CapturedTheme) => theme.bodyClass.split(/\s+/).includes('vscode-high-contrast');

/** Applies `theme` to a page opened with `themeVariables: false` (no stand-in variables of its own). */
export async function applyTheme(page: Page, theme: CapturedTheme): Promise<void> {
  await page.evaluate(({ variables, bodyClass }) => {
    for (const [name, value] of Object.entries(variables)) document.documentElement.style.setProperty(name, value);
    document.body.classList.add(...bodyClass.split(/\s+/).filter(Boolean));
  }, theme);
}

/** WCAG 2 contrast ratio of two opaque sRGB colours [r, g, b] (0-255). */
export function contrastRatio(a: readonly number[], b: readonly number[]): number {
  const luminance = (c: readonly number[]) => {
    const [r, g, bl] = c.map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** One text of the page as drawn: its colour and the background under it, both composited to opaque RGB. */
export interface DrawnText {
  what: string;
  text: string;
  /** Inside aria-hidden: a glyph that marks something (✓, ✕), held to WCAG's 3:1 for graphics, not 4.5:1. */
  decorative: boolean;
  fg: number[];
  bg: number[];
}

/**
 * Every visible text of the elements under `selector` (the element owning a text node, and ::before content such
 * as the invisible-character marks), with its colour composited over the backgrounds beneath it (each ancestor's
 * background-color, alpha included, down to an opaque one) and the opacity of its ancestors.
 */
export function drawnTexts(page: Page, selector: string): Promise<DrawnText[]> {
  return page.evaluate((sel) => {
    const parse = (c: string): number[] => {
      // color-mix() computes to color(srgb r g b / a) with channels 0..1.
      const srgb = c.match(/^color\(srgb ([^)]+)\)$/);
      if (srgb) {
        const p = srgb[1]!.split(/[\s/]+/).filter(Boolean).map(Number);
        return [p[0]! * 255, p[1]! * 255, p[2]! * 255, p[3] ?? 1];
      }
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) throw new Error(`a colour this test cannot read: ${c}`);
      const p = m[1]!.split(/[\s,/]+/).filter(Boolean).map(Number);
      return [p[0]!, p[1]!, p[2]!, p[3] ?? 1];
    };
    const over = (top: number[], under: number[]): number[] => {
      const a = top[3]!;
      return [0, 1, 2].map((i) => top[i]! * a + under[i]! * (1 - a)).concat(1);
    };
    const backgroundUnder = (el: Element): number[] => {
      const layers: number[][] = [];
      for (let e: Element | null = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c[3]! > 0) layers.push(c);
        if (c[3] === 1) break;
      }
      let bg = [255, 255, 255, 1]; // the page behind everything (VS Code's frame); the body paints over it
      for (const layer of layers.reverse()) bg = over(layer, bg);
      return bg;
    };
    const opacity = (el: Element) => {
      let o = 1;
      for (let e: Element | null = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
      return o;
    };
    const visible = (el: Element) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden' && opacity(el) > 0;
    };
    const name = (el: Element) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    const out: { what: string; text: string; decorative: boolean; fg: number[]; bg: number[] }[] = [];
    for (const root of Array.from(document.querySelectorAll(sel))) {
      for (const el of [root, ...Array.from(root.querySelectorAll('*'))]) {
        if (!visible(el) || el.closest('[hidden], .visually-hidden, .codicon')) continue;
        const bg = backgroundUnder(el);
        const own = Array.from(el.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim()).map((n) => n.textContent!.trim()).join(' ');
        const color = parse(getComputedStyle(el).color);
        const decorative = !!el.closest('[aria-hidden="true"]');
        if (own) out.push({ what: name(el), text: own.slice(0, 40), decorative, fg: over([...color.slice(0, 3), color[3]! * opacity(el)], bg), bg });
        const before = getComputedStyle(el, '::before');
        if (before.content && before.content !== 'none' && before.content !== 'normal' && before.content !== '""') {
          const c = parse(before.color);
          out.push({ what: `${name(el)}::before`, text: before.content, decorative, fg: over([...c.slice(0, 3), c[3]! * opacity(el)], bg), bg });
        }
      }
    }
    return out;
  }, selector);
}

/** The border of an element as drawn: widths and colours of its four sides. */
export function borderOf(page: Page, selector: string): Promise<{ width: number; color: string; style: string }[]> {
  return page.locator(selector).evaluateAll((els) => els.map((e) => {
    const s = getComputedStyle(e);
    return { width: Math.min(...['Top', 'Right', 'Bottom', 'Left'].map((side) => parseFloat(s.getPropertyValue(`border-${side.toLowerCase()}-width`)))), color: s.borderTopColor, style: s.borderTopStyle };
  }));
}
