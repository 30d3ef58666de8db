import type { PlatformConfig } from '../config/config.ts'

/**
 * Google's client libraries look for credentials, and outside Google Cloud that includes probing
 * the GCE metadata server (metadata.google.internal, 169.254.169.254): it fails, and the process
 * prints a `MetadataLookupWarning` (and sends that probe off the machine). Stand-ins (the
 * emulators, the local Cloud Tasks and Secret Manager stand-ins) need no credential at all.
 *
 * So when every Google API this configuration uses is a stand-in, METADATA_SERVER_DETECTION is
 * set to `none` (gcp-metadata's switch: "no metadata server here") unless the environment already
 * says otherwise. With a real Google API in use nothing changes: on Google Cloud the metadata
 * server is where the credentials come from. Production never has stand-ins (loadConfig refuses
 * them there), so this only ever applies to local tools, the local stack and tests.
 */
export function googleApisInUse(
  config: Pick<PlatformConfig, 'storeBackend' | 'queueBackend' | 'tasksBackend' | 'secretsBackend' | 'emulatorHosts'>,
): Array<string | null> {
  const used: Array<string | null> = []
  if (config.storeBackend === 'firestore') used.push(config.emulatorHosts.firestore)
  if (config.queueBackend === 'pubsub') used.push(config.emulatorHosts.pubsub)
  if (config.tasksBackend === 'cloudtasks') used.push(config.emulatorHosts.cloudTasks)
  if (config.secretsBackend === 'secretmanager') used.push(config.emulatorHosts.secretManager)
  return used
}

export function skipMetadataServerForStandIns(config: Parameters<typeof googleApisInUse>[0], env: Record<string, string | undefined> = process.env): void {
  if (env.METADATA_SERVER_DETECTION !== undefined && env.METADATA_SERVER_DETECTION !== '') return
  const used = googleApisInUse(config)
  if (used.length > 0 && used.every((host) => host !== null)) env.METADATA_SERVER_DETECTION = 'none'
}
