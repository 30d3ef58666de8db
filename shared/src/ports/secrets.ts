/** Secret names the platform uses. */
export type SecretName = 'operator-token' | 'key-pepper' | 'link-signing-keys' | (string & {})

/**
 * Secret values (latest version). `addVersion` writes a new version that becomes the latest:
 * rotation keeps the old value readable by whoever cached it, never in the store.
 */
export interface Secrets {
  get(name: SecretName): Promise<string | null>
  addVersion(name: SecretName, value: string): Promise<void>
  close(): Promise<void>
}
