import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify'
import fastJsonStringify from 'fast-json-stringify'
import { createAjv } from '../contract/ajv.ts'
import { uuidFixFor } from './uuid-case.ts'

/**
 * The compilers of route schemas, with what they compiled kept for the process.
 *
 * Why: compiling a route's schemas is most of what building an app costs. The portal declares
 * the same shapes on many routes (the error envelope per status, an account id, a page's
 * query), `npm start` builds four apps in one process, and every test file builds apps again;
 * a build of the portal app spent about three quarters of its CPU in Ajv and
 * fast-json-stringify compiling schemas it had compiled before (docs/performance.md, "Start-up").
 *
 * A compiled validator or serializer is a function of its schema's content and of the compiler's
 * options alone, so one compiled once serves every route whose schema has the same content. The
 * key is the schema's JSON (its enumerable content, what both compilers read); two schemas that
 * differ only in the order of their keys are compiled twice, which costs time, never a wrong
 * answer. A schema that does not compile throws at the route's registration, as before, and is
 * not kept. What is kept is bounded by the schemas the code declares.
 */

/** One compiled function per schema content, for the life of the process. */
function memo<T>(): (key: string, compile: () => T) => T {
  const kept = new Map<string, T>()
  return (key, compile) => {
    let fn = kept.get(key)
    if (fn === undefined) {
      fn = compile()
      kept.set(key, fn)
    }
    return fn
  }
}

let ajvs: { bodies: Ajv2020; strings: Ajv2020 } | undefined
const validators = memo<ValidateFunction>()

/**
 * The validator with, once a value is valid, its UUIDs lower-cased in place (uuid-case.ts), so
 * the handler sees ids as they are stored whatever case the caller sent. It is Ajv's function
 * to fastify: `errors` is read through, and `schemaEnv` is kept so fastify still hands over
 * the parent (Ajv needs it to change a root value).
 */
function lowerCasingUuids(validate: ValidateFunction, fix: (value: unknown) => unknown): ValidateFunction {
  const validated = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, cxt)
    if (valid === true) {
      // Ajv may have replaced a coerced root in the parent: fix what is there now
      if (cxt) cxt.parentData[cxt.parentDataProperty] = fix(cxt.parentData[cxt.parentDataProperty])
      else fix(data)
    }
    return valid
  }) as ValidateFunction
  Object.defineProperties(validated, {
    errors: { get: () => validate.errors, set: (errors: ValidateFunction['errors']) => (validate.errors = errors) },
    schema: { value: validate.schema },
    schemaEnv: { value: validate.schemaEnv },
  })
  return validated
}

/**
 * Route validation: bodies are validated strictly (no type coercion: `"5"` is not `5`);
 * querystring, params and headers are coerced, as they only ever arrive as strings. Values of
 * `format: uuid` are lower-cased once valid (lowerCasingUuids); a schema without one gets
 * Ajv's function as it is. A validator shared by several routes is safe: fastify reads its
 * `errors` right after the call that set them.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  // every problem is reported as an issue; schema defaults are filled in (MintLinkBody `type`)
  ajvs ??= {
    bodies: createAjv({ allErrors: true, useDefaults: true }),
    strings: createAjv({ allErrors: true, useDefaults: true, coerceTypes: 'array' }),
  }
  const { bodies, strings } = ajvs
  return ({ schema, httpPart }) => {
    const kind = httpPart === 'body' ? 'body' : 'string'
    return validators(`${kind}\0${JSON.stringify(schema)}`, () => {
      const validate = (kind === 'body' ? bodies : strings).compile(schema as object) as ValidateFunction
      const fix = uuidFixFor(schema)
      return fix ? lowerCasingUuids(validate, fix) : validate
    })
  }
}

const serializers = memo<(data: unknown) => string>()

/**
 * Response serialization by fast-json-stringify, as fastify's own compiler does it when no
 * schema is added with `addSchema` and no `serializerOpts` are set (neither is, anywhere):
 * a response schema's properties, and only those, are written.
 */
export function createSerializerCompiler(): FastifySerializerCompiler<unknown> {
  return ({ schema }) => serializers(JSON.stringify(schema), () => fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]))
}
