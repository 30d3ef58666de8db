import type { ClientOptions } from 'google-gax'

/**
 * Client options that point a Google Cloud client library (google-gax) at a local stand-in of its
 * API: the REST transport (`fallback`), plain HTTP, the stand-in's host and port, and no
 * credentials (a pass-through auth client sends no Authorization header and fetches no token).
 * Used for Cloud Tasks and Secret Manager, which have no official emulator, when
 * CLOUD_TASKS_EMULATOR_HOST / SECRET_MANAGER_EMULATOR_HOST name such a stand-in.
 */
export async function standInClientOptions(hostPort: string): Promise<ClientOptions> {
  const match = /^(.*):(\d+)$/.exec(hostPort)
  if (!match) throw new Error(`not host:port: ${hostPort}`)
  const { PassThroughClient } = await import('google-auth-library')
  return {
    fallback: true,
    protocol: 'http',
    apiEndpoint: match[1],
    port: Number(match[2]),
    authClient: new PassThroughClient(),
  }
}
