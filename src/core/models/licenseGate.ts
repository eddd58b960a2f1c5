// The licence before a download: every confirmation shows the model's licence (name, key terms, URL); a model whose
// commercial use is not plainly allowed (after registration, or not at all) needs an explicit acceptance, asked once
// per model and remembered by the front end (VS Code's globalState; the CLI's --accept-license).
import type { CatalogModel } from './catalog';

export type LicenseLanguage = 'en' | 'zh-cn';

/** What the confirmation shows of the licence, in the front end's language. */
export interface LicenseNotice {
  name: string;
  url: string;
  keyTerms: string;
  commercialUse: CatalogModel['license']['commercialUse'];
  registrationUrl: string | null;
}

/** VS Code's language tag (`zh-cn`, `zh-CN`, `zh-hans`…) to the catalog's key-terms language; English otherwise. */
export function licenseLanguage(tag: string | undefined): LicenseLanguage {
  return /^zh(?:-(?:cn|hans|sg))?$/i.test(tag ?? '') ? 'zh-cn' : 'en';
}

export function licenseNotice(model: Pick<CatalogModel, 'license'>, language: LicenseLanguage): LicenseNotice {
  const l = model.license;
  return { name: l.name, url: l.url, keyTerms: l.keyTerms[language], commercialUse: l.commercialUse, registrationUrl: l.registrationUrl };
}

/** Whether the model's licence must be accepted explicitly before its download. */
export function licenseNeedsAcceptance(model: Pick<CatalogModel, 'license'>): boolean {
  return model.license.commercialUse !== 'allowed';
}

/** The key an acceptance is remembered under (one per model). */
export function licenseAcceptanceKey(model: Pick<CatalogModel, 'id'>): string {
  return `tritonChatglm.licenseAccepted.${model.id}`;
}

/**
 * What a download must do about the licence: go ahead (no acceptance needed, or given before), or ask for it
 * (`accepted`: what the front end remembers for this model, or what the CLI's flag says).
 */
export function licenseGate(model: Pick<CatalogModel, 'license'>, accepted: boolean): 'proceed' | 'ask' {
  return !licenseNeedsAcceptance(model) || accepted ? 'proceed' : 'ask';
}
