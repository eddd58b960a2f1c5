// The "ChatGLM3 on Triton" log channel: container log lines and our lifecycle events. Secrets (the per-container
// admin key, header values) are registered here and replaced before anything is written.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  private readonly channel: vscode.LogOutputChannel;
  private readonly secrets = new Set<string>();

  constructor(name: string) {
    this.channel = vscode.window.createOutputChannel(name, { log: true });
  }

  /** Never write this value (an admin key, a header value). Short values are ignored: they would mangle text. */
  addSecret(secret: string | undefined): void {
    if (secret && secret.length >= 8) this.secrets.add(secret);
  }

  info(message: string): void {
    this.channel.info(this.redact(message));
  }

  warn(message: string): void {
    this.channel.warn(this.redact(message));
  }

  error(message: string, error?: unknown): void {
    this.channel.error(this.redact(error === undefined ? message : `${message}: ${describe(error)}`));
  }

  debug(message: string): void {
    this.channel.debug(this.redact(message));
  }

  /** One line of the container's own log. */
  container(line: string): void {
    this.channel.info(this.redact(`[triton] ${line}`));
  }

  show(): void {
    this.channel.show(true);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('<redacted>');
    return out;
  }

  dispose(): void {
    this.channel.dispose();
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const detail = (error as { detail?: unknown }).detail;
    return typeof detail === 'string' && detail ? `${error.message}\n${detail}` : error.message;
  }
  return String(error);
}
