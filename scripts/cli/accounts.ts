import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { defined, either, int, str, tiers, bool } from './values.ts'

export const accounts: Resource = {
  name: 'accounts',
  summary: 'accounts (tenants): create, get, list, update',
  commands: {
    create: {
      summary: 'create an account; prints it (id, public_id, edge_base_url, ...)',
      usage: '<public_id>',
      required: 1,
      options: {
        name: { type: 'string', help: 'display name' },
        'api-access': { type: 'boolean', help: 'plan feature for API keys (default on; --no-api-access turns it off)' },
        tiers: { type: 'string', help: 'permitted tiers, e.g. 1,2,3 (default); tier 1 must be listed' },
      },
      run: ({ client, args, flags }) =>
        client.request(
          'POST',
          '/accounts',
          defined({
            public_id: args[0]!,
            name: str(flags, 'name'),
            api_access: bool(flags, 'api-access'),
            permitted_tiers: tiers(flags, 'tiers'),
          }),
        ),
    },
    get: {
      summary: 'show one account',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}`),
    },
    list: {
      summary: 'list accounts ordered by id',
      usage: '',
      required: 0,
      options: {
        limit: { type: 'string', help: 'page size (1..200, default 50)' },
        after: { type: 'string', help: 'next_after of the previous page' },
      },
      run: ({ client, flags }) => client.request('GET', '/accounts', undefined, { limit: int(flags, 'limit'), after: str(flags, 'after') }),
    },
    update: {
      summary: 'change an account',
      usage: '<accountId>',
      required: 1,
      options: {
        active: { type: 'boolean', help: 're-activate' },
        inactive: { type: 'boolean', help: 'deactivate (edge host 404, keys 401)' },
        'api-access': { type: 'boolean', help: '--api-access / --no-api-access' },
        tiers: { type: 'string', help: 'permitted tiers, e.g. 1,2' },
        name: { type: 'string', help: 'display name' },
      },
      run: ({ client, args, flags }) =>
        client.request(
          'PATCH',
          `/accounts/${seg(args[0]!)}`,
          defined({
            active: either(flags, 'active', 'inactive'),
            api_access: bool(flags, 'api-access'),
            permitted_tiers: tiers(flags, 'tiers'),
            name: str(flags, 'name'),
          }),
        ),
    },
  },
}
