// What every part of the chat panel reads from the panel and may ask of it.
import type { StateMessage, Strings, WebviewToHost } from '../../protocol';

export interface ChatContext {
  /** The panel's strings: English defaults overlaid with the host's translations. */
  readonly strings: Strings;
  /** The last state the host sent (null until the first one, unless restored). */
  readonly state: StateMessage | null;
  /** The model the texts name ("Ask GLM-4-9B-Chat…"): the state's, "ChatGLM" until the first state arrives. */
  readonly modelName: string;
  postToHost(message: WebviewToHost): void;
  /** Something the panel keeps across hide/show changed: save it soon. */
  scheduleSave(): void;
  /** Moves the focus to what makes the model ready (Start ChatGLM above the messages); false when none shows. */
  focusServerAction(): boolean;
}
