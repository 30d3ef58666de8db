import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import { buildContractSchemaDocument, CONTRACT_SCHEMA_ID, type ContractDefName } from './schema-document.ts'

// ajv-formats is CommonJS; under native ESM its callable is the default export.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

interface ContractValidationResult {
  valid: boolean
  /** same as `valid` (for callers that test `ok`) */
  ok: boolean
  /** Ajv's errors when invalid, otherwise null */
  errors: unknown
}

export interface ContractValidator {
  (defName: ContractDefName, value: unknown): ContractValidationResult
  /** the same function, for callers holding the validator as an object */
  validate(defName: ContractDefName, value: unknown): ContractValidationResult
}

/** What may differ between the Ajv instances of the platform; everything else is the same for all. */
export interface AjvUse {
  /**
   * true: report every problem (request validation answers them all as `issues`; the contract
   * validator reports them all). false: stop at the first (queue and task payloads are refused
   * with one reason, and a malformed message should cost little).
   */
  allErrors: boolean
  /** 'array': querystring, params and headers arrive as strings and are coerced; bodies never are. */
  coerceTypes?: 'array'
  /** fill schema defaults in (request bodies, e.g. MintLinkBody `type`); payloads are never changed. */
  useDefaults?: boolean
}

/**
 * The one Ajv factory: JSON Schema 2020-12, the string formats of ajv-formats, and strict schemas
 * (`strict: true`: a keyword Ajv does not know is a mistake in our schema, not something to
 * ignore; `strictTypes: false` because TypeBox's nullable unions state `type` per branch).
 * The contract document's one annotation keyword, `x-service-contract-version`, is known. Route
 * validation (http/validation.ts), queue payload checks (message-check.ts), visit events
 * (domain/visits/parse.ts) and the contract validator below all build their instance here; the
 * options they differ in are the ones in AjvUse, each saying why.
 */
export function createAjv(use: AjvUse): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    allErrors: use.allErrors,
    coerceTypes: use.coerceTypes ?? false,
    useDefaults: use.useDefaults ?? false,
  })
  addFormats(ajv)
  ajv.addKeyword({ keyword: 'x-service-contract-version', schemaType: 'string' })
  return ajv
}

/** The instance that compiles the contract document (every error reported). */
export function createContractAjv(): Ajv2020 {
  return createAjv({ allErrors: true })
}

/**
 * Validates values against the published contract document (what customers compile), for
 * tests and self-checks: `createContractValidator()('Contact', value).valid`.
 */
export function createContractValidator(): ContractValidator {
  const ajv = createContractAjv()
  ajv.addSchema(buildContractSchemaDocument())
  const validate = ((defName: ContractDefName, value: unknown): ContractValidationResult => {
    const fn = ajv.getSchema(`${CONTRACT_SCHEMA_ID}#/$defs/${defName}`)
    if (!fn) throw new Error(`unknown contract definition: ${defName}`)
    const valid = fn(value) as boolean
    return { valid, ok: valid, errors: valid ? null : (fn.errors ?? []) }
  }) as ContractValidator
  validate.validate = validate
  return validate
}
