// Size and format limits of the webview protocol: the host trusts nothing the webview posts beyond these.
export const LIMITS = {
  /** A question typed in the panel. */
  userText: 32_000,
  /** A code block from an answer (copy / insert / open). */
  code: 1_000_000,
  /** Text of one stored message sent to the webview. */
  content: 1_000_000,
  /** One streamed delta. */
  delta: 64_000,
  title: 200,
  /** A link's URL and its visible text (openLink). */
  url: 8_192,
  linkText: 2_000,
  errorText: 4_000,
  messages: 10_000,
  l10nEntries: 500,
  l10nValue: 2_000,
  /** Attachment chips of one question (above the input or in the transcript; the host allows 20 plus the current file). */
  attachments: 32,
  /** A chip's path (relative, or the full path of its tooltip). */
  attachmentPath: 4_096,
  /** Line numbers of a selection chip. */
  attachmentLine: 10_000_000,
} as const;

export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Language ids of fenced code blocks (`c++`, `objective-c`, `c#`, `f#`...); empty = unknown. */
export const LANGUAGE_PATTERN = /^[A-Za-z0-9_+#.-]{0,32}$/;
export const L10N_KEY_PATTERN = /^(?!__)[A-Za-z0-9_.-]{1,64}$/;
