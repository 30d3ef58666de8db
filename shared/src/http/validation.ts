import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js'
import type { FastifySchemaCompiler } from 'fastify'
import type { ValidationIssue } from '../errors/app-error.ts'
import { createAjv } from '../contract/ajv.ts'

/**
 * Route validation: bodies are validated strictly (no type coercion: `"5"` is not `5`);
 * querystring, params and headers are coerced, as they only ever arrive as strings.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  // every problem is reported as an issue; schema defaults are filled in (MintLinkBody `type`)
  const forBodies = createAjv({ allErrors: true, useDefaults: true })
  const forStrings = createAjv({ allErrors: true, useDefaults: true, coerceTypes: 'array' })
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? forBodies : forStrings
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
