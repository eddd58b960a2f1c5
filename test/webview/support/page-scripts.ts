// Scripts the webview tests and benchmarks run in the panel's page before its own (Panel `init`), as plain strings
// so they do not depend on how the test runner compiles functions.

/**
 * A MutationObserver over the whole document, from DOMContentLoaded on (after the page's own markup), that records
 * every element or attribute which must never appear, even for a moment: nodes that are inserted and removed
 * again before the observer runs are still in its records, and attribute records keep the value an attribute had
 * before it changed. Results: `window.__domGuard = { mutations, checkedElements, violations }`.
 */
export const DOM_GUARD = `(() => {
  const FORBIDDEN = new Set(['SCRIPT', 'IFRAME', 'FRAME', 'FRAMESET', 'OBJECT', 'EMBED', 'APPLET', 'PORTAL', 'STYLE',
    'LINK', 'META', 'BASE', 'FORM', 'INPUT', 'SELECT', 'OPTION', 'IMG', 'IMAGE', 'PICTURE', 'SOURCE', 'VIDEO', 'AUDIO',
    'TRACK', 'SVG', 'MATH', 'TEMPLATE', 'NOSCRIPT', 'DETAILS', 'DIALOG', 'FOREIGNOBJECT', 'USE', 'ANIMATE', 'SET']);
  const URL_ATTRS = new Set(['href', 'src', 'srcset', 'srcdoc', 'action', 'formaction', 'data', 'poster', 'background', 'ping', 'xlink:href', 'codebase', 'cite']);
  const BAD_VALUE = /^[\\s\\u0000-\\u001f]*(?:j\\s*a\\s*v\\s*a\\s*s\\s*c\\s*r\\s*i\\s*p\\s*t|v\\s*b\\s*s\\s*c\\s*r\\s*i\\s*p\\s*t|d\\s*a\\s*t\\s*a)\\s*:/i;
  const guard = { mutations: 0, checkedElements: 0, violations: [] };
  window.__domGuard = guard;
  const describe = (el) => el.nodeName + (el.getAttribute && el.getAttribute('class') ? '.' + el.getAttribute('class') : '');
  const checkAttr = (el, name, value, when) => {
    const n = name.toLowerCase();
    if (n.startsWith('on')) guard.violations.push(when + ' handler attribute ' + n + ' on ' + describe(el));
    else if (n === 'style') guard.violations.push(when + ' style attribute on ' + describe(el));
    else if (URL_ATTRS.has(n)) guard.violations.push(when + ' URL attribute ' + n + '=' + JSON.stringify(String(value).slice(0, 80)) + ' on ' + describe(el));
    if (value !== null && value !== undefined && BAD_VALUE.test(String(value))) guard.violations.push(when + ' script-like value in ' + n + ' on ' + describe(el));
  };
  const checkElement = (el, when) => {
    guard.checkedElements += 1;
    if (FORBIDDEN.has(el.nodeName.toUpperCase())) guard.violations.push(when + ' element ' + describe(el));
    for (const a of Array.from(el.attributes || [])) checkAttr(el, a.name, a.value, when);
  };
  const handle = (records) => {
    for (const r of records) {
      guard.mutations += 1;
      if (r.type === 'childList') {
        for (const node of r.addedNodes) {
          if (node.nodeType !== 1) continue;
          const still = node.isConnected ? 'added' : 'added, then removed:';
          checkElement(node, still);
          for (const d of node.querySelectorAll('*')) checkElement(d, still);
        }
      } else if (r.type === 'attributes') {
        const el = r.target;
        checkAttr(el, r.attributeName, el.getAttribute(r.attributeName), 'set');
        if (r.oldValue !== null && BAD_VALUE.test(r.oldValue)) guard.violations.push('earlier script-like value of ' + r.attributeName + ' on ' + describe(el));
      }
    }
  };
  const observer = new MutationObserver(handle);
  document.addEventListener('DOMContentLoaded', () => {
    observer.observe(document, { subtree: true, childList: true, attributes: true, attributeOldValue: true });
  });
  /** Processes the records not delivered yet (call before reading the results). */
  window.__domGuardFlush = () => handle(observer.takeRecords());
})();`;

/**
 * Animation frames as soon as possible (the next task, through a MessageChannel: timers would be clamped to 4 ms)
 * instead of at the display's rate: a test can then render a frame after every character of a long text in
 * seconds, and a benchmark measures the same per-frame work without waiting 16 ms between frames. The panel's code
 * is unchanged; only the pacing differs.
 */
export const FAST_FRAMES = `(() => {
  const queue = new Map();
  let next = 1;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    const due = [...queue.entries()];
    queue.clear();
    const now = performance.now();
    for (const [, cb] of due) cb(now);
  };
  window.requestAnimationFrame = (cb) => { const id = next++; if (queue.size === 0) channel.port2.postMessage(0); queue.set(id, cb); return id; };
  window.cancelAnimationFrame = (id) => { queue.delete(id); };
})();`;

/** What hostile payloads call if they ever run (`__pwn('id')`), and the prototype's keys before anything ran. */
export const PWN_SENTINEL = `(() => {
  window.__pwned = undefined;
  window.__pwn = (id) => { (window.__pwned = window.__pwned || []).push(String(id)); };
  window.__protoKeys = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
})();`;

/**
 * Records every link that is live (has data-href) at any moment, even one replaced before the next frame, and
 * whether it was inside the block still streaming (.stream-tail). Results: `window.__liveLinks = { ever, inTail }`.
 */
export const LIVE_LINK_WATCH = `(() => {
  const log = { ever: [], inTail: [] };
  window.__liveLinks = log;
  const seen = new Set();
  const record = (a, parent) => {
    const href = a.getAttribute('data-href');
    if (href === null) return;
    if (!seen.has(href)) { seen.add(href); log.ever.push(href); }
    const tail = (a.closest && a.closest('.stream-tail')) || (parent && parent.closest && parent.closest('.stream-tail'));
    if (tail && !log.inTail.includes(href)) log.inTail.push(href);
  };
  const check = (node, parent) => {
    if (node.nodeType !== 1) return;
    if (node.nodeName === 'A') record(node, parent);
    for (const a of node.querySelectorAll('a[data-href]')) record(a, parent);
  };
  const handle = (records) => {
    for (const r of records) {
      if (r.type === 'childList') for (const n of r.addedNodes) check(n, r.target);
      else check(r.target, r.target.parentElement);
    }
  };
  const observer = new MutationObserver(handle);
  document.addEventListener('DOMContentLoaded', () => observer.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-href'] }));
  window.__liveLinksFlush = () => handle(observer.takeRecords());
})();`;
