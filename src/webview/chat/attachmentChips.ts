// The attachment chips of the chat panel. Above the input (AttachmentBar): "Add File…", the active editor's file as
// a chip (suggested: dashed, "current file — click to attach"; or, with `always`, one that switches on and off),
// then what the user attached, each removable and showing its tokens ("geometry.py:3-4 · 56 tokens"). In the transcript (sentChips): the chips a
// question went out with. A chip shows the file name and its lines ("geometry.py:3-4"), a symbol's name and lines,
// a file's name tagged "problems", or "Changes"; its tooltip the full path, the lines and (above the input) the
// token estimate; a click opens the code. The host owns the chips: these only draw its `attachments` message and
// post what the user clicked. Names and paths are the workspace's text: invisible and bidirectional characters in
// them are marked as in answers (a name is an isolate, so `invoice\u202Etxt.exe` cannot read as `invoiceexe.txt`),
// and tooltips show them, and any line break, as `<U+…>` so that a path cannot add lines of its own.
import { showInvisibleCharacters, showInvisibleCharactersOnOneLine } from '../../core/text/invisibleCharacters';
import { format, type AttachmentsMessage, type AttachmentView, type Strings } from '../../protocol';
import { el } from '../shared/dom';
import type { ChatContext } from './chatContext';
import { appendMarkedName } from './invisibleMarks';

/** What a click on a chip asks for (data-attachment on its button). */
const ACTION = { open: 'open', remove: 'remove', toggleActive: 'toggle-active', addFile: 'add-file' } as const;

/**
 * Text glyphs, not inline SVG or an icon font: the panel holds no SVG at all (so an SVG in it can only be a sanitizer
 * escape, which the hostile-output test looks for) and loads no font files.
 */
const glyph = (text: string) => el('span', { class: 'chip-glyph', 'aria-hidden': 'true' }, text);

const fileName = (path: string) => path.slice(path.lastIndexOf('/') + 1) || path;

/** ":3-4", ":7" or "" (a whole file). */
function rangeSuffix(v: Pick<AttachmentView, 'startLine' | 'endLine'>): string {
  if (v.startLine === undefined) return '';
  return v.endLine === undefined || v.endLine === v.startLine ? `:${v.startLine}` : `:${v.startLine}-${v.endLine}`;
}

/** A name on a chip, its invisible characters marked. */
function nameSpan(name: string, strings: Strings): HTMLElement {
  const span = el('span', { class: 'chip-name' });
  appendMarkedName(span, name, strings);
  return span;
}

function tooltip(v: AttachmentView, strings: Strings): string {
  const lines: string[] = [showInvisibleCharactersOnOneLine(v.fullPath)];
  if (v.startLine !== undefined) {
    lines.push(v.endLine === undefined || v.endLine === v.startLine
      ? format(strings.attachmentLine, v.startLine) : format(strings.attachmentLines, v.startLine, v.endLine));
  }
  if (v.tokens !== undefined) lines.push(format(strings.attachmentTokens, figure(v.tokens)));
  return lines.join('\n');
}

/** A figure in the page's language ("1,234"). */
const figure = (n: number) => n.toLocaleString(document.documentElement.lang || undefined);

/** "· 56 tokens": the figure with its unit, after the chip's name. */
const chipTokens = (n: number, strings: Strings) => `· ${n === 1 ? strings.chipTokensOne : format(strings.chipTokens, figure(n))}`;

/** What the chip's name says: the file name, a symbol's name, or "Changes". */
function chipName(v: AttachmentView, strings: Strings): string {
  if (v.kind === 'changes') return strings.changesChip;
  if (v.kind === 'symbol' && v.label) return v.label;
  return fileName(v.path);
}

/** One chip: open on click; with `removable`, a × that takes it off the next question (and its tokens on it). */
function chip(v: AttachmentView, strings: Strings, removable: boolean): HTMLElement {
  const tag = v.kind === 'problems' || v.kind === 'symbol' ? strings[`chipKind.${v.kind}`] : '';
  const label = `${showInvisibleCharactersOnOneLine(chipName(v, strings))}${rangeSuffix(v)}${tag ? ` (${tag})` : ''}`;
  const main = el('button', { type: 'button', class: 'chip-main', 'data-attachment': ACTION.open, 'data-id': v.id, 'aria-label': format(strings.openAttachment, label) },
    el('span', { class: 'chip-label' }, nameSpan(chipName(v, strings), strings), el('span', { class: 'chip-range' }, rangeSuffix(v)),
      ...(v.kind === 'problems' ? [el('span', { class: 'chip-tag' }, ` ${tag}`)] : [])));
  const parts: Node[] = [main];
  if (removable && v.tokens !== undefined) parts.push(el('span', { class: 'chip-tokens', 'aria-hidden': 'true' }, chipTokens(v.tokens, strings)));
  if (removable) {
    const remove = format(strings.removeAttachment, label);
    parts.push(el('button', { type: 'button', class: 'chip-remove', 'data-attachment': ACTION.remove, 'data-id': v.id, 'aria-label': remove, title: remove }, glyph('×')));
  }
  return el('span', { class: 'attachment-chip', 'data-kind': v.kind, 'data-id': v.id, title: tooltip(v, strings) }, ...parts);
}

/** Clicks on chip buttons inside `root` become protocol messages. */
function listen(root: HTMLElement, ctx: ChatContext, onToggle?: () => void): void {
  root.addEventListener('click', (e) => {
    const target = (e.target as Element | null)?.closest('button[data-attachment]');
    if (!target || (target as HTMLButtonElement).disabled) return;
    const id = target.getAttribute('data-id') ?? '';
    switch (target.getAttribute('data-attachment')) {
      case ACTION.open: ctx.postToHost({ type: 'openAttachment', id }); break;
      case ACTION.remove: ctx.postToHost({ type: 'removeAttachment', id }); break;
      case ACTION.addFile: ctx.postToHost({ type: 'addFile' }); break;
      case ACTION.toggleActive: onToggle?.(); break;
    }
  });
}

/** The chips above the input, drawn from the host's last `attachments` message. */
export class AttachmentBar {
  readonly element: HTMLElement;
  private current: AttachmentsMessage | null = null;

  constructor(private readonly ctx: ChatContext) {
    this.element = el('div', { class: 'attachment-bar', role: 'group' });
    listen(this.element, ctx, () => {
      const active = this.current?.activeFile;
      // A suggested chip is attached by its click; an `always` one switches on and off.
      if (active) this.ctx.postToHost({ type: 'toggleActiveFile', enabled: active.suggested ? true : !active.enabled });
    });
    this.render();
  }

  applyStrings(): void {
    this.render();
  }

  render(message?: AttachmentsMessage): void {
    if (message) this.current = message;
    const strings = this.ctx.strings;
    this.element.setAttribute('aria-label', strings.attachments);
    const add = el('button', { type: 'button', class: 'attachment-add', 'data-attachment': ACTION.addFile, title: strings.addFileTooltip },
      glyph('+'), strings.addFile);
    const chips: Node[] = [add];
    const active = this.current?.activeFile;
    if (active) chips.push(this.activeChip(active, strings));
    for (const v of this.current?.items ?? []) chips.push(chip(v, strings, true));
    this.element.replaceChildren(...chips);
  }

  private activeChip(active: NonNullable<AttachmentsMessage['activeFile']>, strings: Strings): HTMLElement {
    if (active.suggested) {
      const b = el('button', {
        type: 'button',
        class: `attachment-chip active-file suggested${active.refusal ? ' refused' : ''}`,
        'data-attachment': ACTION.toggleActive,
        title: refusal(active) ?? [showInvisibleCharactersOnOneLine(active.fullPath), strings.activeFileSuggestedHint,
          ...(active.tokens !== undefined ? [format(strings.attachmentTokens, figure(active.tokens))] : [])].join('\n'),
      }, nameSpan(fileName(active.path), strings), el('span', { class: 'chip-tag' }, strings.activeFileSuggested));
      b.disabled = !!active.refusal;
      return b;
    }
    const hint = refusal(active) ?? [
      showInvisibleCharactersOnOneLine(active.fullPath),
      active.enabled ? strings.activeFileOn : strings.activeFileOff,
      ...(active.untrusted && !active.enabled ? [strings.activeFileUntrusted] : []),
      ...(active.enabled && active.tokens !== undefined ? [format(strings.attachmentTokens, figure(active.tokens))] : []),
    ].join('\n');
    const b = el('button', {
      type: 'button',
      class: `attachment-chip active-file${active.refusal ? ' refused' : ''}`,
      'data-attachment': ACTION.toggleActive,
      'aria-pressed': String(active.enabled),
      title: hint,
    }, nameSpan(fileName(active.path), strings), el('span', { class: 'chip-tag' }, strings.activeFileTag));
    b.disabled = !!active.refusal;
    return b;
  }
}

/** The host's reason the current file cannot go (it may quote the path). */
const refusal = (active: NonNullable<AttachmentsMessage['activeFile']>) => (active.refusal === undefined ? undefined : showInvisibleCharacters(active.refusal));

/** The chips of a sent question, under its text in the transcript. */
export function sentChips(ctx: ChatContext, views: readonly AttachmentView[]): HTMLElement {
  const row = el('div', { class: 'attachment-chips sent', role: 'list', 'aria-label': ctx.strings.attachedContext },
    ...views.map((v) => { const c = chip(v, ctx.strings, false); c.setAttribute('role', 'listitem'); return c; }));
  listen(row, ctx);
  return row;
}

/** Whether two messages carry the same chips (the message list keeps a rendered message only then). */
export function sameAttachments(a: readonly AttachmentView[] | undefined, b: readonly AttachmentView[] | undefined): boolean {
  const key = (v: AttachmentView) => `${v.id}|${v.kind}|${v.label ?? ''}|${v.path}|${v.fullPath}|${rangeSuffix(v)}`;
  const ka = (a ?? []).map(key).join('\n');
  const kb = (b ?? []).map(key).join('\n');
  return ka === kb;
}
