import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import { buildContractSchemaDocument, CONTRACT_SCHEMA_ID, type ContractDefName } from './schema-document.ts'

// ajv-formats is CommonJS; under native ESM its callable is the default export.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

export interface ContractValidationResult {
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

/** A strict Ajv 2020 instance with formats that knows the document's `x-` annotation. */
export function createContractAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false })
  addFormats(ajv)
  ajv.addKeyword({ keyword: 'x-service-contract-version', schemaType: 'string' })
  return ajv
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
