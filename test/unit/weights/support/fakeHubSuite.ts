// The lifecycle every download test file shares: one fake Hub (test/support/fake-hub.mjs) for the file, reset after
// each test, and temporary folders removed after each test. Each file keeps its own typed view of the fake.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before } from 'node:test';
import { pathToFileURL } from 'node:url';

export interface FakeHubSuite<Module, Hub> {
  /** The fake-hub module and the file's Hub: set once the file's `before` hooks have run. */
  readonly module: Module;
  readonly hub: Hub;
  /** A fresh folder, removed after the test. */
  tmp(): string;
}

export function fakeHubSuite<Module extends { startFakeHub(o?: object): Promise<Hub> }, Hub extends { reset(): void; close(): Promise<unknown> }>(
  prefix: string,
  /** Called once the Hub runs, inside the same hook (a file's own `before` may run before an async one ends). */
  onReady: (module: Module, hub: Hub) => void = () => undefined,
): FakeHubSuite<Module, Hub> {
  let module: Module | undefined;
  let hub: Hub | undefined;
  let dirs: string[] = [];
  before(async () => {
    module = (await import(pathToFileURL(join(__dirname, '../../../support/fake-hub.mjs')).href)) as Module;
    hub = await module.startFakeHub();
    onReady(module, hub);
  });
  after(async () => {
    await hub?.close();
  });
  afterEach(() => {
    hub?.reset();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    dirs = [];
  });
  return {
    get module() { return module!; },
    get hub() { return hub!; },
    tmp() {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
  };
}
