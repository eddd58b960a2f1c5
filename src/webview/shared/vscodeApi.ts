// The webview side of the VS Code API: posting to the host and the state VS Code keeps while the panel is hidden.
// Typed by the page's protocol: `Outgoing` is what the page may post, `State` what it keeps.

export interface VsCodeApi<Outgoing, State = never> {
  postMessage(message: Outgoing): void;
  getState(): State | undefined;
  setState(state: State): void;
}

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };

/** acquireVsCodeApi may be called once per page; keep the instance here. */
export function getVsCodeApi<Outgoing, State = never>(): VsCodeApi<Outgoing, State> {
  const api = acquireVsCodeApi();
  return {
    postMessage: (m) => api.postMessage(m),
    getState: () => api.getState() as State | undefined,
    setState: (s) => api.setState(s),
  };
}
