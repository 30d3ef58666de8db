import { writeFileSync } from 'node:fs'

/**
 * Preloaded (`node --import`) into a CLI process by test/management/cli-links.test.ts: when the
 * process exits, writes the METADATA_SERVER_DETECTION it ended with to the file named by
 * LSV_TEST_METADATA_REPORT. The CLI's Google clients for stand-ins never probe the metadata server
 * today (they carry a pass-through auth client), so no warning can show the switch; the
 * variable itself can.
 */
const file = process.env.LSV_TEST_METADATA_REPORT
if (file) {
  process.on('exit', () => {
    writeFileSync(file, JSON.stringify({ METADATA_SERVER_DETECTION: process.env.METADATA_SERVER_DETECTION ?? null }))
  })
}
