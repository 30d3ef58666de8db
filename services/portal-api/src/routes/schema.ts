import { readFile } from 'node:fs/promises'
import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { buildContractSchemaDocument, CONTRACT_SCHEMA_DIALECT } from '@lsv/shared/contract/schema-document.ts'
import { canonicalJson } from '@lsv/shared/contract/canonical-json.ts'
import { OPENAPI_FILE } from '@lsv/shared/contract/generated-files.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'

const SCHEMA_MEDIA_TYPE = 'application/schema+json'
const CONTRACT_HEADER = 'X-Service-Contract'

/**
 * Describes (does not repeat) the served document, for OpenAPI. Its members are named in the
 * description only: `$schema`, `$id` and `$defs` as property names would be read as keywords by
 * the schema resolvers fastify and @fastify/swagger run over route schemas.
 */
const SchemaDocumentShape = Type.Object(
  {},
  {
    description: `JSON Schema 2020-12 document (\`$schema\` ${CONTRACT_SCHEMA_DIALECT}) with \`$id\`, \`title\`, \`x-service-contract-version\` (${CONTRACT_VERSION}) and, under \`$defs\`, Contact, ContactList, FieldPolicy and WebhookEventV2`,
    additionalProperties: true,
  },
)

const OPENAPI_DOCUMENT = 'OpenAPI 3.1.0 description of the interface'
const OpenApiDocumentShape = Type.Object({}, { description: OPENAPI_DOCUMENT, additionalProperties: true })

/**
 * The contract's own endpoints (contract 4.1):
 * - `GET /api/v1/schema`: the JSON Schema document. No authentication, no tenant resolution,
 *   no database read: it is built from code, so it answers 200 whatever the stores are doing,
 *   and any Authorization header is ignored.
 * - `GET /api/v1/openapi.json`: the committed OpenAPI document (shared/generated/openapi.json).
 *
 * `deps` is deliberately unused: these routes carry the contract, never tenant data.
 */
export function registerSchemaRoutes(app: App, _deps: PlatformDeps): void {
  // Built once; the same bytes as the committed shared/generated/contract-2026-09-04.schema.json.
  // A Buffer, because fastify appends `; charset=utf-8` to a string sent with a JSON-like media
  // type, and the contract names the media type exactly.
  const schemaBytes = Buffer.from(canonicalJson(buildContractSchemaDocument()), 'utf8')

  app.get(
    '/api/v1/schema',
    {
      schema: {
        operationId: 'getContractSchema',
        tags: ['contract'],
        summary: 'The contract as a JSON Schema 2020-12 document',
        description: 'Needs no authentication; performs no tenant resolution and no database read. Always answers 200.',
        security: SECURITY.none,
        response: {
          200: {
            description: 'the contract schema document',
            headers: { [CONTRACT_HEADER]: { type: 'string', description: 'the dated contract version', example: CONTRACT_VERSION } },
            content: { [SCHEMA_MEDIA_TYPE]: { schema: SchemaDocumentShape } },
          },
        },
      },
    },
    async (_request, reply) => {
      return reply.code(200).header(CONTRACT_HEADER, CONTRACT_VERSION).type(SCHEMA_MEDIA_TYPE).send(schemaBytes)
    },
  )

  let openApiBytes: Promise<Buffer> | null = null
  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['contract'],
        summary: 'The OpenAPI 3.1.0 description of the interface',
        security: SECURITY.none,
        response: {
          // the committed file's bytes are sent as they are; the schema describes the document they hold
          200: { description: OPENAPI_DOCUMENT, content: { 'application/json': { schema: OpenApiDocumentShape } } },
          ...errorResponses(500),
        },
      },
    },
    async (_request, reply) => {
      // Read once; a failed read is not cached, so a later request can succeed.
      openApiBytes ??= readFile(OPENAPI_FILE).catch((cause: unknown) => {
        openApiBytes = null
        throw new AppError('internal', { cause })
      })
      const bytes = await openApiBytes
      return reply.code(200).type('application/json; charset=utf-8').send(bytes)
    },
  )
}
