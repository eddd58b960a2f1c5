// The webview side of the VS Code API: posting to the host and the state VS Code keeps while the panel is hidden.
import type { WebviewToHost } from '../protocol';

export interface VsCodeApi<S> {
  postMessage(message: WebviewToHost): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };

/** acquireVsCodeApi may be called once per page; keep the instance here. */
export function getVsCodeApi<S>(): VsCodeApi<S> {
  const api = acquireVsCodeApi();
  return {
    postMessage: (m) => api.postMessage(m),
    getState: () => api.getState() as S | undefined,
    setState: (s) => api.setState(s),
  };
}
