// Which plural form a count takes in a language (Intl.PluralRules: English has "one" and "other", Chinese only
// "other"). The front end holds one localized message per form and picks with this; "selection(s)" is never shown.

export type PluralForm = 'one' | 'other';

export function pluralForm(count: number, locale: string): PluralForm {
  let rules: Intl.PluralRules;
  try {
    rules = new Intl.PluralRules(locale);
  } catch {
    rules = new Intl.PluralRules('en');
  }
  // Only the two forms our bundles hold: languages with more (few, many) read the general one.
  return rules.select(count) === 'one' ? 'one' : 'other';
}
