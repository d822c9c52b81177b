// Compiles against the worker-store migration's declarations (./boss and ./boss/vectors).
import {
  FULL_WORKER_STORE_V2_RECORD_VERSION,
  migrateFullWorkerStoreV1,
  parseFullWorkerStoreMigrationInputV1,
  parseWorkerStoreRecordV2,
  validateWorkerStoreRecordV2,
  type FullWorkerStoreMigrationInputV1,
  type OwningManagerRecipientV1,
  type WorkerStoreManagerRecipientContext,
  type WorkerStoreRecordV2,
} from "@ctliz/agent-intercom-core/boss";
import {
  FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS,
  FULL_WORKER_STORE_MIGRATION_VECTORS,
  FULL_WORKER_STORE_MIGRATION_VECTORS_HASH,
  FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS,
} from "@ctliz/agent-intercom-core/boss/vectors";
import { canonicalHash } from "@ctliz/agent-intercom-core/canonical";

const first = FULL_WORKER_STORE_MIGRATION_VECTORS[0]!;
const input: FullWorkerStoreMigrationInputV1 = parseFullWorkerStoreMigrationInputV1(first.input);
const record: WorkerStoreRecordV2 = migrateFullWorkerStoreV1(input);
const version: "orc.worker-store-record.v2" = record.version;
const context: WorkerStoreManagerRecipientContext = input.notice.owningManagerRecipient.recipientContext;
const recipient: OwningManagerRecipientV1 = record.notice.owningManagerRecipient;
if (recipient.recipientContext !== "headless_cli") recipient.recipientSessionId.toUpperCase();
const state: string | null = parseWorkerStoreRecordV2(record).health.canonicalState;
const checked = validateWorkerStoreRecordV2(record);
const generation: number = checked.ok ? checked.value.worker.workerGeneration : 0;
const hash: string = canonicalHash("agent-intercom-core/worker-store-v1-v2-full-v2", FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS);
const rejected: string = FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS[0]!.name;
export { version, context, state, generation, hash, rejected, FULL_WORKER_STORE_V2_RECORD_VERSION, FULL_WORKER_STORE_MIGRATION_VECTORS_HASH };
