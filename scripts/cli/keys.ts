import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { defined, int, list, str } from './values.ts'

const keysOf = (args: string[]) => `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}/keys`

export const keys: Resource = {
  name: 'keys',
  summary: 'API keys of an api connection: create, get, rotate, revoke',
  commands: {
    create: {
      summary: 'issue a key; prints it once (store it now)',
      usage: '<accountId> <connectionId>',
      required: 2,
      options: {
        scopes: { type: 'string', help: 'comma-separated: contacts:write (default), contacts:links:write, contacts:read' },
        name: { type: 'string', help: 'display name' },
        'expires-at': { type: 'string', help: 'ISO-8601 instant after which the key answers 401' },
      },
      run: ({ client, args, flags }) =>
        client.request(
          'POST',
          keysOf(args),
          defined({
            scopes: list(flags, 'scopes'),
            name: str(flags, 'name'),
            expires_at: str(flags, 'expires-at'),
          }),
        ),
    },
    get: {
      summary: "show a key's metadata (never the key)",
      usage: '<accountId> <connectionId> <keyId>',
      required: 3,
      run: ({ client, args }) => client.request('GET', `${keysOf(args)}/${seg(args[2]!)}`),
    },
    rotate: {
      summary: 'replace a key (same scopes); the old one works for the grace period',
      usage: '<accountId> <connectionId> <keyId>',
      required: 3,
      options: { grace: { type: 'string', help: 'seconds the old key keeps working (default 86400)' } },
      run: ({ client, args, flags }) => client.request('POST', `${keysOf(args)}/${seg(args[2]!)}/rotate`, defined({ grace_seconds: int(flags, 'grace') })),
    },
    revoke: {
      summary: 'revoke a key, at once or after --grace seconds',
      usage: '<accountId> <connectionId> <keyId>',
      required: 3,
      options: { grace: { type: 'string', help: 'seconds the key keeps working (default 0)' } },
      run: ({ client, args, flags }) => client.request('DELETE', `${keysOf(args)}/${seg(args[2]!)}`, undefined, { grace_seconds: int(flags, 'grace') }),
    },
  },
}

export const tokens: Resource = {
  name: 'tokens',
  summary: 'the source token of a webhook connection: rotate',
  commands: {
    rotate: {
      summary: 'replace the token; prints the new one once; the old one works for the grace period',
      usage: '<accountId> <connectionId>',
      required: 2,
      options: { grace: { type: 'string', help: 'seconds the old token keeps working (default 86400)' } },
      run: ({ client, args, flags }) =>
        client.request('POST', `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}/token/rotate`, defined({ grace_seconds: int(flags, 'grace') })),
    },
  },
}
