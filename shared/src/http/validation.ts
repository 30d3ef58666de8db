import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import type { ValidationIssue } from '../errors/app-error.ts'

// ajv-formats is CommonJS; under native ESM its callable is the default export.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

function makeAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
  })
  addFormats(ajv)
  return ajv
}

/**
 * Route validation: bodies are validated strictly (no type coercion: `"5"` is not `5`);
 * querystring, params and headers are coerced, as they only ever arrive as strings.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv(false)
  const coercing = makeAjv(true)
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    return ajv.compile(schema as object) as ValidateFunction
  }
}

/** Ajv errors -> the contract's `issues` (`code`, `message`, `path` as a JSON pointer). */
export function issuesFromAjv(errors: readonly Partial<ErrorObject>[] | undefined | null): ValidationIssue[] {
  if (!errors) return []
  return errors.map((e) => {
    let path = e.instancePath ?? ''
    const params = (e.params ?? {}) as Record<string, unknown>
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') path += `/${params.missingProperty}`
    if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') path += `/${params.additionalProperty}`
    return { code: e.keyword ?? 'invalid', message: e.message ?? 'is invalid', path: path === '' ? '/' : path }
  })
}
