'use strict'
// The full worker-store migration corpus (vectors/worker-store-migration-v2.json, embedded in
// the core) with the hash the core computes from it. Part of ./boss/vectors (and ./boss).
const { callFrozen } = require('../lib/contract.js')

const { semanticsHash, hashDomain, corpus } = callFrozen('boss.workerStoreMigrationVectors', [])

module.exports = {
  FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION: corpus.version,
  FULL_WORKER_STORE_MIGRATION_VECTORS_HASH: semanticsHash,
  FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN: hashDomain,
  FULL_WORKER_STORE_MIGRATION_VECTORS: corpus.vectors,
  FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS: corpus.strictRejectionVectors,
  // What the hash is computed over: {version, vectors, strictRejectionVectors}.
  FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS: Object.freeze({
    version: corpus.version,
    vectors: corpus.vectors,
    strictRejectionVectors: corpus.strictRejectionVectors,
  }),
}
