/**
 * `links rotate-signing-key`: adds a link signing key and makes it current, keeping every
 * previous key so tokens already minted still resolve (rotateLinkSigningKey,
 * shared/src/domain/links/signing-keys.ts). With Secret Manager that is a new version of
 * `link-signing-keys`, written with the operator's own credentials like `gcloud secrets versions
 * add`: the services may only read the secret (infra/secrets.tf), so this is not a management
 * API call. portal-api and webhook-dispatcher pick the new key up within a minute.
 *
 *   SECRETS_BACKEND=secretmanager GOOGLE_CLOUD_PROJECT=<project> npm run cli -- links rotate-signing-key
 */
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '@lsv/shared/config/config.ts'
import { systemClock } from '@lsv/shared/model/clock.ts'
import { createSecretsAdapter } from '@lsv/shared/platform/deps.ts'
import { LINK_SIGNING_KEYS_SECRET, parseKeySet, rotateLinkSigningKey } from '@lsv/shared/domain/links/signing-keys.ts'
import type { Io } from './main.ts'

export const LINKS_HELP = `usage: npm run cli -- links rotate-signing-key

Adds a link signing key to the secret ${LINK_SIGNING_KEYS_SECRET} and makes it current; every
previous key stays, so links minted before keep resolving. Prints the key ids (never a key).
Talks to the secrets backend directly, with your credentials (not to the management API):
  SECRETS_BACKEND=secretmanager GOOGLE_CLOUD_PROJECT=<project>   Secret Manager (a new version)
  SECRETS_BACKEND=embedded DATA_DIR=<folder> (the default)       the local stack's files
portal-api and webhook-dispatcher use the new key within a minute, without a restart.
Remove an old key only after the longest expSeconds you issue (docs/operations.md).

exit codes: 0 rotated, 2 usage or configuration error, 1 the secret could not be read or written
`

const VERBS = ['rotate-signing-key'] as const

/** `links <verb>`: exit code 0, 1 or 2 (as `export`). */
export async function runLinks(argv: string[], io: Io): Promise<number> {
  let verb: string | undefined
  try {
    const { positionals, values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    if (values.help || positionals[0] === 'help') {
      io.out(LINKS_HELP)
      return 0
    }
    verb = positionals[0]
    if (positionals.length !== 1 || !(VERBS as readonly string[]).includes(verb!)) {
      throw new Error(verb === undefined ? 'a verb is needed' : `unknown verb "${positionals.join(' ')}"; verbs: ${VERBS.join(', ')}`)
    }
  } catch (err) {
    io.err(`error: ${(err as Error).message}\n\n${LINKS_HELP}`)
    return 2
  }

  let config
  try {
    config = loadConfig(io.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`error: ${err.message}`)
      return 2
    }
    throw err
  }
  const { secrets, closeClient } = await createSecretsAdapter(config)
  try {
    const kid = await rotateLinkSigningKey({ secrets, clock: systemClock })
    const stored = await secrets.get(LINK_SIGNING_KEYS_SECRET)
    const set = parseKeySet(stored ?? '')
    io.out(
      JSON.stringify(
        { secret: LINK_SIGNING_KEYS_SECRET, backend: config.secretsBackend, rotated: kid, current: set.current, keys: [...set.keys.keys()] },
        null,
        2,
      ),
    )
    return 0
  } catch (err) {
    const cause = (err as Error).cause as Error | undefined
    io.err(`error: ${(err as Error).message}${cause ? `: ${cause.message}` : ''}`)
    return 1
  } finally {
    await secrets.close()
    await closeClient()
  }
}
