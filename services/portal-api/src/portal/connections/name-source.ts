import type { NameSource } from '@lsv/shared/model/records.ts'

/**
 * "Name from" on a contact's page, in words (issue 29, D12). The contract's `name_source` is the
 * writer's class, and a push through any inbound connection (an API key, a webhook source, a
 * partner CRM) is the `manual` class (docs/ingestion.md): shown bare, a tenant whose name came
 * from an API push read "manual" as "typed in by hand". The class stays visible, as the contract
 * and the change feed name it.
 */
const NAME_SOURCE_WORDS: Record<NonNullable<NameSource>, string> = {
  manual: 'your own system, through an inbound connection (an API push, a webhook source or a partner CRM)',
  form: 'a form the person filled in',
  enrichment: 'enrichment',
  provider: 'a data provider',
}

export function nameSourceText(source: NameSource): string {
  return source === null ? 'no name yet' : `${NAME_SOURCE_WORDS[source]} (${source})`
}
