import { CUSTOM_FIELD_KEY_PATTERN, MAPPING_TARGET_PATTERN, SOURCE_SLUG_PATTERN } from '@lsv/shared/contract/admin.ts'

/**
 * One schema error as TypeBox's Value.Errors and fastify's Ajv both describe it: the keyword
 * that failed and its params. The schema's own message ("must match pattern \"^[a-z0-9]…\"")
 * is written for a developer reading an API answer; a tenant reading a form gets the sentence
 * below, next to the field (issue 22, 3).
 */
interface SchemaIssue {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
}

/**
 * A pattern of the contract, said in words. Keyed by the pattern itself, so a field that reuses
 * one (a slug, a custom field key) reads the same on every form.
 */
const PATTERN_SENTENCES: Record<string, string> = {
  [SOURCE_SLUG_PATTERN]: 'Use lower-case letters, digits, - and _ only, starting with a letter or digit (at most 64 characters).',
  [CUSTOM_FIELD_KEY_PATTERN]: 'Use lower-case letters, digits and _ only, starting with a letter (at most 64 characters).',
  [MAPPING_TARGET_PATTERN]: 'Choose a target from the list.',
}

/** What one item of a list field is called, by the list's name (for "Choose at least one scope."). */
const ITEM_NOUNS: Record<string, [one: string, many: string]> = {
  scopes: ['scope', 'scopes'],
  domains: ['domain', 'domains'],
  field_mappings: ['mapping', 'mappings'],
}

const DAY = 86_400
/** 2592000 seconds reads better with its days next to it. */
function seconds(path: string, n: number): string {
  return path.endsWith('_seconds') && n >= DAY && n % DAY === 0 ? `${n} (${n / DAY} days)` : String(n)
}

function limitOf(issue: SchemaIssue): number {
  const p = issue.params
  return Number(p.limit ?? p.minimum ?? p.maximum ?? p.minLength ?? p.maxLength ?? p.minItems ?? p.maxItems)
}

function items(issue: SchemaIssue, n: number): string {
  const name = issue.instancePath.split('/').at(-1) ?? ''
  const [one, many] = ITEM_NOUNS[name] ?? ['item', 'items']
  return n === 1 ? `one ${one}` : `${n} ${many}`
}

/**
 * The sentence a portal form shows for a schema error. Every keyword the portal's form schemas
 * use has its own; an unforeseen one still reads as a sentence, never as schema text.
 */
export function fieldMessage(issue: SchemaIssue): string {
  const n = limitOf(issue)
  switch (issue.keyword) {
    case 'required':
      return 'Fill in this field.'
    case 'minLength':
      return n <= 1 ? 'Fill in this field.' : `Use at least ${n} characters.`
    case 'maxLength':
      return `Use at most ${n} characters.`
    case 'pattern':
      return PATTERN_SENTENCES[String(issue.params.pattern)] ?? 'This value is not in the form this field accepts.'
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
      return 'Choose one of the options offered.'
    case 'type':
      return issue.params.type === 'integer'
        ? 'Enter a whole number, such as 3600.'
        : issue.params.type === 'number'
          ? 'Enter a number.'
          : 'This value is not accepted here.'
    case 'minimum':
    case 'exclusiveMinimum':
      return `Enter ${seconds(issue.instancePath, n)} or more.`
    case 'maximum':
    case 'exclusiveMaximum':
      return `Enter ${seconds(issue.instancePath, n)} or less.`
    case 'minItems':
      return `Choose at least ${items(issue, n)}.`
    case 'maxItems':
      return `Give at most ${items(issue, n)}.`
    case 'uniqueItems':
      return 'List each value once.'
    case 'format':
      return issue.params.format === 'uri' ? 'Enter a full URL, such as https://example.com/hook.' : 'This value is not in the form this field accepts.'
    case 'additionalProperties':
      return 'The form sent a field this page does not know; reload the page and try again.'
    default:
      return 'This value is not accepted here.'
  }
}
