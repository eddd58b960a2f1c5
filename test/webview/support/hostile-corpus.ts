// Hostile model output for the webview tests: every payload calls `__pwn('<id>')` (recorded by the page) or points
// at attacker.example if it ever becomes live. Grouped by the class of trick; each entry is one markdown block.

export interface Payload {
  id: string;
  markdown: string;
}

const p = (id: string, markdown: string): Payload => ({ id, markdown });

/** Mutation XSS: markup that changes meaning when parsed again (svg/math/style/noscript/template nesting). */
export const MUTATION_XSS: Payload[] = [
  p('svg-style', '<svg><style><img src=x onerror="__pwn(\'svg-style\')"></style></svg>'),
  p('math-mglyph', '<math><mtext><table><mglyph><style><img src=x onerror="__pwn(\'math-mglyph\')">'),
  p('noscript-title', '<noscript><p title="</noscript><img src=x onerror=__pwn(\'noscript\')>">'),
  p('template', '<template><script>__pwn("template")</script></template><template><img src=x onerror=__pwn(\'tpl\')></template>'),
  p('form-math', '<form><math><mtext></form><form><mglyph><style></math><img src onerror=__pwn(\'form-math\')>'),
  p('svg-p-style', '<svg></p><style><a id="</style><img src=1 onerror=__pwn(\'svg-p\')>">'),
  p('math-mi-table', '<math><mi><table><mi><style><img src=x onerror=__pwn(\'mi-table\')>'),
  p('style-style', '<style><style/><img src=x onerror=__pwn(\'style-style\')>'),
  p('iframe-srcdoc', '<iframe srcdoc="<script>parent.__pwn(\'srcdoc\')</script>"></iframe>'),
  p('object-embed', '<object data="javascript:__pwn(\'object\')"></object><embed src="javascript:__pwn(\'embed\')">'),
  p('base-meta-link', '<base href="https://attacker.example/"><meta http-equiv="refresh" content="0;url=https://attacker.example/"><link rel="stylesheet" href="https://attacker.example/x.css">'),
  p('raw-anchor', 'text <a href="javascript:__pwn(\'raw-a\')" onclick="__pwn(\'raw-a2\')">raw anchor</a> text'),
  p('img-in-list', '- <img src=x onerror="__pwn(\'li-img\')">\n- <svg onload="__pwn(\'li-svg\')">'),
  p('svg-animate', '<svg><animate onbegin=__pwn(\'animate\') attributeName=x dur=1s></svg>'),
  p('foreign-object', '<svg><foreignObject><iframe src="javascript:__pwn(\'fo\')"></iframe></foreignObject></svg>'),
  p('select-template', '<select><template><style><img src=x onerror=__pwn(\'select\')></style></template></select>'),
  p('caption-svg', '<table><caption><svg><style><img src=x onerror=__pwn(\'caption\')>'),
  p('details', '<details open ontoggle="__pwn(\'details\')">x</details>'),
  p('xlink', '<math><mi xlink:href="javascript:__pwn(\'xlink\')">m</mi></math>'),
  p('comment-breakout', '<!--><img src=x onerror=__pwn(\'comment\')>-->'),
  p('cdata', '<svg><![CDATA[><img src=x onerror=__pwn(\'cdata\')>]]></svg>'),
];

/** HTML-looking content inside markdown constructs that do render (link text, titles, alt text, cells, headings). */
export const IN_MARKDOWN: Payload[] = [
  p('link-text', '[<img src=x onerror=__pwn(\'linktext\')>](https://example.com/a)'),
  p('link-title', '[titled](https://example.com/b "<img src=x onerror=__pwn(\'title\')>")'),
  p('title-quote', '[quoted](https://example.com/c "\\" onmouseover=\\"__pwn(\'title-quote\')")'),
  p('image-alt', '![<img src=x onerror=__pwn(\'alt\')>](https://attacker.example/p.png "t")'),
  p('image-local', '![local image](/media/chat/track.png)'),
  p('image-data', '![data image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9Il9fcHduKDEpIi8+)'),
  p('table-cell', '| <img src=x onerror=__pwn(\'cell\')> | b |\n|:--|--:|\n| <svg onload=__pwn(\'cell2\')> | [c](javascript:__pwn(\'cell3\')) |'),
  p('heading', '# <svg onload=__pwn(\'h1\')> heading'),
  p('code-span', 'inline `<img src=x onerror=__pwn(\'codespan\')>` code'),
  p('autolink-quote', '<https://example.com/"onmouseover="__pwn(\'autolink\')">'),
  p('refdef-breakout', '[refdef][r1]\n\n[r1]: https://example.com/"><img src=x onerror=__pwn(\'refdef\')>'),
  p('blockquote', '> <script>__pwn("bq")</script>\n> > <img src=x onerror=__pwn(\'bq2\')>'),
];

/** Link destinations that must never become live: scheme tricks with tabs, entities and look-alikes. */
export const LINK_TRICKS: Payload[] = [
  p('js', '[js link](javascript:__pwn(\'js\'))'),
  p('js-case', '[js case](  JaVaScRiPt:__pwn(\'js-case\'))'),
  p('js-tab', '[js tab](<java\tscript:__pwn(\'js-tab\')>)'),
  p('ent-a', '[ent a](jav&#x61;script:__pwn(\'ent-a\'))'),
  p('ent-j', '[ent j](&#106;avascript:__pwn(\'ent-j\'))'),
  p('ent-colon', '[ent colon](javascript&colon;__pwn(\'ent-colon\'))'),
  p('ent-tab', '[ent tab](jav&#x09;ascript:__pwn(\'ent-tab\'))'),
  p('ent-noterm', '[ent noterm](&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;__pwn(\'ent-noterm\'))'),
  p('pct', '[pct](%6Aavascript:__pwn(\'pct\'))'),
  p('ctl', '[ctl](\u0001javascript:__pwn(\'ctl\'))'),
  p('fullwidth', '[fullwidth](ｊavascript:__pwn(\'fullwidth\'))'),
  p('cyrillic', '[cyrillic](јavascript:__pwn(\'cyrillic\'))'),
  p('fullwidth-https', '[fullwidth https](ｈttps://attacker.example/fw)'),
  p('zwsp-https', '[zwsp https](https\u200b://attacker.example/zw)'),
  p('https-js', '[https js](https:javascript:__pwn(\'https-js\'))'),
  p('https-backslash', '[https backslash](https:%5Cattacker.example)'),
  p('https-backslash2', '[https backslash2](https:\\\\attacker.example)'),
  p('userinfo', '[https://example.com@attacker.example/](https://example.com@attacker.example/)'),
  p('mailto-js', '[mailto js](mailto:javascript:__pwn(\'mailto\'))'),
  p('data', '[data link](data:text/html;base64,PHNjcmlwdD5fX3B3bignZGF0YScpPC9zY3JpcHQ+)'),
  p('vbscript', '[vb](vbscript:msgbox(1))'),
  p('file', '[file](file:///etc/passwd)'),
  p('command', '[command](command:workbench.action.terminal.new)'),
  p('vscode', '[vscode](vscode://ms-python.python/x)'),
  p('proto-relative', '[proto relative](//attacker.example/pr)'),
  p('auto-js', '<javascript:__pwn(\'auto-js\')>'),
  p('auto-userinfo', '<https://example.com@attacker.example/auto>'),
  p('auto-mailto-js', '<mailto:javascript:alert(1)>'),
  p('ref-js', '[ref js][r2]\n\n[r2]: javascript:__pwn(\'ref-js\')'),
  p('safe', '[ok link](https://example.com/docs "title")'),
  p('safe-mailto', '[mail us](mailto:team@example.com)'),
];

/** Fence info strings and language names that could confuse attribute writing or prototype lookups. */
export const FENCES: Payload[] = [
  p('info-breakout', '```"><img src=x onerror=__pwn(\'info\')>\ncode\n```'),
  p('info-quote', '```js" onclick="__pwn(\'info-quote\')\nlet a = 1;\n```'),
  p('info-attrs', '```python{onclick=__pwn(\'attrs\')} title="x"\nprint(1)\n```'),
  p('tilde-script', '~~~<script>__pwn("tilde")</script>\ntext\n~~~'),
  p('fence-close', '```javascript\n</code></pre><img src=x onerror=__pwn(\'fence-close\')>\n```'),
  ...['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf', 'isPrototypeOf'].map((lang) =>
    p(`lang-${lang}`, `\`\`\`${lang}\nconst x = {};\n\`\`\``)),
  p('long-info', `\`\`\`${'x'.repeat(300)}\nbody\n\`\`\``),
];

/** Entities that decode to markup or to nothing (all must stay text). */
export const ENTITIES: Payload[] = [
  p('entity-img', '&lt;img src=x onerror=__pwn(\'entity\')&gt;'),
  p('entity-num', '&#60;script&#62;__pwn("num-entity")&#60;/script&#62;'),
  p('entity-hex', '&#x3C;svg onload=__pwn(\'hex\')&#x3E;'),
  p('entity-double', '&amp;lt;b&amp;gt; and &amp;#x3C;'),
  p('entity-invalid', '&#0; &#x110000; &#xD800; &bogus; &amp'),
  p('entity-invisible', 'zero width: a&ZeroWidthSpace;b, rlm: a&rlm;b'),
];

/** Prototype keys as reference labels (must pollute nothing). */
export const PROTOTYPE: Payload[] = [
  p('ref-proto', '[proto][__proto__] and [ctor][constructor]\n\n[__proto__]: https://example.com/proto\n[constructor]: https://example.com/ctor'),
];

export const ALL: Payload[] = [...MUTATION_XSS, ...IN_MARKDOWN, ...LINK_TRICKS, ...FENCES, ...ENTITIES, ...PROTOTYPE];

/** The corpus as one answer, one payload per block. */
export const CORPUS = ALL.map((x) => x.markdown).join('\n\n');

/** The only link targets the corpus may leave live (data-href); everything else must end up as text. */
export const SAFE_LINK_TARGETS = new Set([
  'https://example.com/a', 'https://example.com/b', 'https://example.com/c', 'https://example.com/docs',
  'mailto:team@example.com', 'https://example.com/proto', 'https://example.com/ctor',
  // the quotes are percent-encoded: an ordinary (odd) path on example.com
  'https://example.com/%22onmouseover=%22__pwn(\'autolink\')%22',
]);

/** Where streaming in chunks must cut: inside every tag (after `<` and halfway to `>`), entity, fence marker and link. */
export function trickyCuts(text: string): number[] {
  const cuts = new Set<number>();
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '<') {
      cuts.add(i + 1);
      const close = text.indexOf('>', i);
      if (close > i + 2) cuts.add(Math.floor((i + close) / 2));
    } else if (ch === '&') {
      cuts.add(i + 1);
      const semi = text.indexOf(';', i);
      if (semi > i + 2 && semi - i < 12) cuts.add(Math.floor((i + semi) / 2));
    } else if (text.startsWith('```', i) || text.startsWith('~~~', i)) {
      cuts.add(i + 1);
      cuts.add(i + 2);
    } else if (text.startsWith('](', i) || text.startsWith(':/', i) || ch === '"') {
      cuts.add(i + 1);
    }
  }
  return [...cuts].filter((c) => c > 0 && c < text.length).sort((a, b) => a - b);
}

/** Deterministic random cut points, chunks of 1 to `max` characters. */
export function randomCuts(length: number, max: number, seed = 1): number[] {
  const out: number[] = [];
  let s = seed;
  for (let at = 0; ;) {
    s = (s * 1103515245 + 12345) % 2147483648;
    at += 1 + ((s >>> 16) % max); // the high bits: an LCG's low bits repeat with a short period
    if (at >= length) return out;
    out.push(at);
  }
}
