/** The operator token and key pepper of createTestDeps (OPERATOR_TOKEN, KEY_PEPPER), for tests that sign in or hash with them. */
export const TEST_OPERATOR_TOKEN = 'test-operator-token'
export const TEST_PEPPER = 'test-key-pepper'
