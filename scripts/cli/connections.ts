import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { defined, either, mappings, str } from './values.ts'

const MAP_HELP = 'field mapping from=to (repeatable or comma-separated); to is email, first_name, last_name, company, title, external_id or custom_fields.<key>'

export const connections: Resource = {
  name: 'connections',
  summary: 'inbound connections (api, webhook, partnercrm): create, get, list, update',
  commands: {
    create: {
      summary: 'create a connection; a webhook connection prints its token (once) and webhook_url',
      usage: '<accountId>',
      required: 1,
      options: {
        type: { type: 'string', required: true, help: 'api | webhook | partnercrm' },
        source: { type: 'string', help: 'source slug of the (source, external_id) anchor (default: the type)' },
        name: { type: 'string', help: 'display name' },
        map: { type: 'string', multiple: true, help: MAP_HELP },
      },
      run: ({ client, args, flags }) =>
        client.request(
          'POST',
          `/accounts/${seg(args[0]!)}/connections`,
          defined({
            type: str(flags, 'type'),
            source: str(flags, 'source'),
            name: str(flags, 'name'),
            field_mappings: mappings(flags, 'map'),
          }),
        ),
    },
    list: {
      summary: 'list the connections of an account',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/connections`),
    },
    get: {
      summary: 'show one connection',
      usage: '<accountId> <connectionId>',
      required: 2,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}`),
    },
    update: {
      summary: 'change a connection (field mappings replace the current list)',
      usage: '<accountId> <connectionId>',
      required: 2,
      options: {
        active: { type: 'boolean', help: 're-activate' },
        inactive: { type: 'boolean', help: 'deactivate' },
        name: { type: 'string', help: 'display name' },
        map: { type: 'string', multiple: true, help: MAP_HELP },
        'clear-mappings': { type: 'boolean', help: 'remove every field mapping' },
      },
      run: ({ client, args, flags }) =>
        client.request(
          'PATCH',
          `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}`,
          defined({
            active: either(flags, 'active', 'inactive'),
            name: str(flags, 'name'),
            field_mappings: flags['clear-mappings'] === true ? [] : mappings(flags, 'map'),
          }),
        ),
    },
  },
}
