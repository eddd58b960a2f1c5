// The extension's OpenAI endpoint from its settings. Policy: the extension serves it only on loopback (no key to
// keep in settings); serving other machines is the CLI's `serve-openai --host ... --api-key ...`.
import type { ExtensionSettings } from '../settings/settingsSchema';
import { DEFAULT_OPENAI_HOST } from './server';

export interface EndpointPlan {
  host: string;
  port: number;
}

/** Where the endpoint should listen now, or undefined when it is off. */
export function endpointPlan(settings: Pick<ExtensionSettings, 'openai.enabled' | 'openai.port'>): EndpointPlan | undefined {
  return settings['openai.enabled'] ? { host: DEFAULT_OPENAI_HOST, port: settings['openai.port'] } : undefined;
}

export const samePlan = (a: EndpointPlan | undefined, b: EndpointPlan | undefined): boolean => a?.host === b?.host && a?.port === b?.port;
