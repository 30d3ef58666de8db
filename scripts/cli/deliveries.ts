import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { int, jsonArgument, str } from './values.ts'

export const deliveries: Resource = {
  name: 'deliveries',
  summary: 'the delivery log of an integration: list, replay',
  commands: {
    list: {
      summary: 'one page of the delivery log, newest first',
      usage: '<accountId> <integrationId>',
      required: 2,
      options: {
        limit: { type: 'string', help: 'page size (1..100, default 25)' },
        cursor: { type: 'string', help: 'next_cursor of the previous page' },
      },
      run: ({ client, args, flags }) =>
        client.request('GET', `/accounts/${seg(args[0]!)}/integrations/${seg(args[1]!)}/deliveries`, undefined, {
          limit: int(flags, 'limit'),
          cursor: str(flags, 'cursor'),
        }),
    },
    replay: {
      summary: 'send a kept delivery again',
      usage: '<accountId> <integrationId> <deliveryId>',
      required: 3,
      run: ({ client, args }) => client.request('POST', `/accounts/${seg(args[0]!)}/integrations/${seg(args[1]!)}/deliveries/${seg(args[2]!)}/replay`),
    },
  },
}

export const visits: Resource = {
  name: 'visits',
  summary: 'visit events: send',
  commands: {
    send: {
      summary: 'inject a visit event, as the identification pipeline publishes it',
      usage: '<accountId> <json | @file | ->',
      required: 2,
      details: ['example: visits send <accountId> \'{"id":"evt-1","tier":"person","visit":{},"contact_id":"<uuid>"}\''],
      run: ({ client, args }) => client.request('POST', `/accounts/${seg(args[0]!)}/visits`, jsonArgument(args[1]!)),
    },
  },
}
