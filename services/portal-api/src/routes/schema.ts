import { readFile } from 'node:fs/promises'
import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { buildContractSchemaDocument, CONTRACT_SCHEMA_DIALECT } from '@lsv/shared/contract/schema-document.ts'
import { canonicalJson } from '@lsv/shared/contract/canonical-json.ts'
import { OPENAPI_FILE, OPENAPI_HOST_FILES } from '@lsv/shared/contract/generated-files.ts'
import { StringEnum } from '@lsv/shared/contract/common.ts'
import { PUBLIC_ID_PATTERN } from '@lsv/shared/contract/admin.ts'
import { edgeBaseUrlFor } from '@lsv/shared/config/config.ts'
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
const HOSTS = ['portal', 'edge'] as const
type OpenApiHost = (typeof HOSTS)[number]

const OpenApiDocumentShape = Type.Object({}, { description: OPENAPI_DOCUMENT, additionalProperties: true })

/**
 * The contract's own endpoints (contract 4.1):
 * - `GET /api/v1/schema`: the JSON Schema document. No authentication, no tenant resolution,
 *   no database read: it is built from code, so it answers 200 whatever the stores are doing,
 *   and any Authorization header is ignored.
 * - `GET /api/v1/openapi.json`: the committed OpenAPI document (shared/generated/openapi.json),
 *   or with `?host=` one host's document (openapi.{portal,edge}.json) with that host's URL from
 *   the configuration as its server.
 *
 * Only `deps.config` is read, at request time: these routes carry the contract, never tenant data.
 */
export function registerSchemaRoutes(app: App, deps: PlatformDeps): void {
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

  // Read once each; a failed read is not cached, so a later request can succeed.
  const committed = new Map<string, Promise<Buffer>>()
  const read = (file: string): Promise<Buffer> => {
    let bytes = committed.get(file)
    if (!bytes) {
      bytes = readFile(file).catch((cause: unknown) => {
        committed.delete(file)
        throw new AppError('internal', { cause })
      })
      committed.set(file, bytes)
    }
    return bytes
  }

  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['contract'],
        summary: 'The OpenAPI 3.1.0 description of the interface',
        description:
          "Without `host`: the whole interface, each operation naming its own server. With `host`: the operations of that host alone, with that host as the top-level server (the deployment's portal origin, or the edge host of `account`), and one credential form per operation, for code generators that read only the top-level `servers` or send every listed credential.",
        security: SECURITY.none,
        querystring: Type.Object({
          host: Type.Optional(StringEnum(HOSTS, { description: 'only the operations of this host, with it as the top-level server' })),
          account: Type.Optional(
            Type.String({
              pattern: PUBLIC_ID_PATTERN,
              description:
                "with `host=edge`: the account's public id, the first label of its edge host; without it the server URL keeps a `public_id` variable",
            }),
          ),
        }),
        response: {
          // the committed file's bytes are sent as they are; the schema describes the document they hold
          200: { description: OPENAPI_DOCUMENT, content: { 'application/json': { schema: OpenApiDocumentShape } } },
          ...errorResponses(400, 500),
        },
      },
    },
    async (request, reply) => {
      const { host, account } = request.query
      if (!host)
        return reply
          .code(200)
          .type('application/json; charset=utf-8')
          .send(await read(OPENAPI_FILE))
      const doc = JSON.parse(await read(OPENAPI_HOST_FILES[host]).then((b) => b.toString('utf8'))) as Record<string, unknown>
      doc.servers = [hostServer(deps.config, host, account)]
      return reply
        .code(200)
        .type('application/json; charset=utf-8')
        .send(Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, 'utf8'))
    },
  )
}

/** The deployment's own URL of a host: what a generated client uses as its base URL. */
function hostServer(config: PlatformDeps['config'], host: OpenApiHost, account: string | undefined): Record<string, unknown> {
  if (host === 'portal') return { url: config.portalBaseUrl, description: 'the portal origin' }
  if (account) return { url: edgeBaseUrlFor(config, account.toLowerCase()), description: `the edge host of account ${account.toLowerCase()}` }
  return {
    url: config.edgeBaseUrlTemplate,
    description: "the edge host; `public_id` is the account's public id",
    variables: { public_id: { default: 'customer-public-id', description: "the account's public id (or ask with `account=`)" } },
  }
}
