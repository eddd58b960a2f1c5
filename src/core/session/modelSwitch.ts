// Switching the served model while our container runs. The container mounts one model's weights (the chosen
// model's folder, labelled with its id), so another model needs a new container: the switch is one action that
// unloads the served model (its requests end first), stops the container, starts one with the new model's mount
// and loads the new model. The front ends ask first and say that a restart is part of it.
import { catalogModel } from '../models/catalog';

/** The served model and the chosen one, when they differ: what a switch does. */
export interface ModelSwitch {
  /** Catalog id of the model the running container was started for. */
  from: string;
  /** Catalog id of the chosen model. */
  to: string;
  fromName: string;
  toName: string;
}

/** The switch a running container needs (started for `served`, `chosen` now), or undefined when none is needed. */
export function pendingModelSwitch(served: string | undefined, chosen: string): ModelSwitch | undefined {
  if (served === undefined || served === chosen) return undefined;
  const name = (id: string) => catalogModel(id)?.displayName ?? id;
  return { from: served, to: chosen, fromName: name(served), toName: name(chosen) };
}

/** What a switch needs of the server session (ServerSession). */
export interface SwitchableSession {
  unload(): Promise<void>;
  stop(): Promise<void>;
  startChatglm(): Promise<boolean>;
}

/** Unload → stop → start with the chosen model's mount → load. Resolves true when the new model is ready. */
export async function switchModel(session: SwitchableSession): Promise<boolean> {
  await session.unload();
  await session.stop();
  return session.startChatglm();
}
