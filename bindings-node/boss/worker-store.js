'use strict'
// The full worker-store migration of ./boss (core/src/boss/worker_store/): constants from the
// core, one call per function, and the two store validators as the canonical store gate
// (validateVersionedStoreRecord) around the record parsers, as in the TypeScript core.
const { call } = require('../lib/contract.js')
const { validateVersionedStoreRecord } = require('../canonical/index.js')
const C = require('./constants.js')

const parseFullWorkerStoreMigrationInputV1 = (value) => call('boss.parseFullWorkerStoreMigrationInputV1', [value])
const migrateFullWorkerStoreV1 = (value) => call('boss.migrateFullWorkerStoreV1', [value])
const parseWorkerStoreRecordV2 = (value) => call('boss.parseWorkerStoreRecordV2', [value])
const validateFullWorkerStoreMigrationInputV1 = (value) =>
  validateVersionedStoreRecord(value, C.FULL_WORKER_STORE_MIGRATION_VERSION, parseFullWorkerStoreMigrationInputV1)
const validateWorkerStoreRecordV2 = (value) =>
  validateVersionedStoreRecord(value, C.FULL_WORKER_STORE_V2_RECORD_VERSION, parseWorkerStoreRecordV2)

module.exports = {
  FULL_WORKER_STORE_MIGRATION_VERSION: C.FULL_WORKER_STORE_MIGRATION_VERSION,
  FULL_WORKER_STORE_V2_RECORD_VERSION: C.FULL_WORKER_STORE_V2_RECORD_VERSION,
  WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS: C.WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS,
  parseFullWorkerStoreMigrationInputV1,
  migrateFullWorkerStoreV1,
  parseWorkerStoreRecordV2,
  validateFullWorkerStoreMigrationInputV1,
  validateWorkerStoreRecordV2,
}
