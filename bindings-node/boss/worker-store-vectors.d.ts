// The full worker-store migration corpus (exported by @ctliz/agent-intercom-core/boss/vectors and
// ./boss): vectors/worker-store-migration-v2.json, with the hash the core computes from it.
import type {
  FullWorkerStoreMigrationVectorHashDomain, FullWorkerStoreMigrationVectorVersion,
} from '../facts.js'
import type { FullWorkerStoreMigrationInputV1, WorkerStoreRecordV2 } from './worker-store.js'

export declare const FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION: FullWorkerStoreMigrationVectorVersion
/** canonicalHash(FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN, FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS). */
export declare const FULL_WORKER_STORE_MIGRATION_VECTORS_HASH: string
export declare const FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN: FullWorkerStoreMigrationVectorHashDomain

export interface FullWorkerStoreMigrationVector {
  name: string
  input: FullWorkerStoreMigrationInputV1
  expected: WorkerStoreRecordV2
}
/** Nine inputs, one per legacy state, and the records they migrate to. */
export declare const FULL_WORKER_STORE_MIGRATION_VECTORS: readonly FullWorkerStoreMigrationVector[]

/** A v2 record (shaped like one, but wrong) that parseWorkerStoreRecordV2 refuses. */
export interface FullWorkerStoreV2StrictRejectionVector {
  readonly name: string
  readonly value: { readonly [K in keyof WorkerStoreRecordV2]: unknown }
}
/** The seventeen strict rejections. */
export declare const FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS: readonly FullWorkerStoreV2StrictRejectionVector[]

export declare const FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS: {
  readonly version: typeof FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION
  readonly vectors: typeof FULL_WORKER_STORE_MIGRATION_VECTORS
  readonly strictRejectionVectors: typeof FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS
}
