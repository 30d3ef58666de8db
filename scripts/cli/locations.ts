import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { defined, int } from './values.ts'

const locationsOf = (args: string[]) => `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}/locations`

export const locations: Resource = {
  name: 'locations',
  summary: 'locations of the partnercrm connection: add, remove, rotate (token)',
  commands: {
    add: {
      summary: 'connect a location; prints its token (once) and webhook_url',
      usage: '<accountId> <connectionId> <locationId>',
      required: 3,
      run: ({ client, args }) => client.request('POST', locationsOf(args), { location_id: args[2]! }),
    },
    remove: {
      summary: 'disconnect a location (no longer active)',
      usage: '<accountId> <connectionId> <locationId>',
      required: 3,
      run: ({ client, args }) => client.request('DELETE', `${locationsOf(args)}/${seg(args[2]!)}`),
    },
    rotate: {
      summary: "replace a location's token; prints the new one once; the old one works for the grace period",
      usage: '<accountId> <connectionId> <locationId>',
      required: 3,
      options: { grace: { type: 'string', help: 'seconds the old token keeps working (default 86400)' } },
      run: ({ client, args, flags }) =>
        client.request('POST', `${locationsOf(args)}/${seg(args[2]!)}/token/rotate`, defined({ grace_seconds: int(flags, 'grace') })),
    },
  },
}
