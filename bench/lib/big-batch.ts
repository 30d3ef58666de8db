/** The records of the benches' ~8 MiB batch: 10,000 of them, under the 8388608-byte cap once wrapped in `{contacts}`. */
export function bigBatchRecords(): Array<Record<string, string>> {
  return Array.from({ length: 10_000 }, (_, i) => ({
    external_id: `big-${i}`,
    email: `person.${i}@example.com`,
    first_name: `First${i}`,
    last_name: `Last${i}`,
    company: `Company ${i % 977}`,
    title: 'Head of Things',
    notes: 'n'.repeat(640),
  }))
}
