import type { PlatformDeps } from '../../ports/deps.ts'
import type { TenantStore, WriteOptions } from '../../ports/tenant-store.ts'
import { auditEntryOf, type NewAuditEntry } from './record.ts'

/**
 * The writes that take WriteOptions (ports/tenant-store.ts), with the number of arguments before
 * it. A new write method of the port is added here too, or its changes go unaudited.
 */
const AUDITABLE_WRITES = {
  createAccount: 1,
  updateAccount: 2,
  createConnection: 1,
  updateConnection: 2,
  createApiKey: 1,
  updateApiKey: 2,
  putLocation: 1,
  updateLocation: 3,
  createCustomField: 1,
  createIntegration: 1,
  updateIntegration: 2,
  deleteIntegration: 1,
} as const satisfies Partial<Record<keyof TenantStore, number>>

type Auditable = keyof typeof AUDITABLE_WRITES

/**
 * `deps` whose tenant store writes the change's audit entry with the change: the first write a
 * domain function makes through them (createConnection, updateAccount, …) is given
 * WriteOptions.audit, and the store commits the entry in the same transaction or batch
 * (ports/tenant-store.ts), so a change is never saved without its entry, nor an entry written
 * for a change that failed (issue 21 item 4). `build` gets the record as written (`T`: the
 * record type of that write) and must not throw; auditEntryOf redacts and never does.
 *
 * Later writes of the same call pass unchanged: a change is one audit entry. A call that writes
 * nothing records nothing (nothing changed). The domain functions stay as they are: they are
 * given these deps instead of the request's.
 */
export function withAuditedChange<D extends Pick<PlatformDeps, 'tenants' | 'clock'>, T>(deps: D, build: (written: T) => NewAuditEntry): D {
  let attached = false
  const audit = (written: T) => auditEntryOf(deps, build(written))
  const inner = deps.tenants
  const tenants = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (typeof prop !== 'string' || !Object.hasOwn(AUDITABLE_WRITES, prop)) return value
      const arity = AUDITABLE_WRITES[prop as Auditable]
      return (...args: unknown[]) => {
        if (attached) return (value as (...a: unknown[]) => unknown).apply(target, args)
        attached = true
        const options: WriteOptions<T> = { audit }
        return (value as (...a: unknown[]) => unknown).apply(target, [
          ...args.slice(0, arity),
          ...Array(Math.max(0, arity - args.length)).fill(undefined),
          options,
        ])
      }
    },
  }) as TenantStore
  return { ...deps, tenants }
}
