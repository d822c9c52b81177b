// Authority transitions (exported by @ctliz/agent-intercom-core/boss).
import type {
  AuthorityRequestOperations, AuthorityTransitionOperations, AuthorityTransitionStates,
} from '../facts.js'
import type {
  BossBindingEpoch, BrokerRevision, ControllerGeneration, ParticipantBindingEpoch,
  StoreValidationResult, SubscriberBindingEpoch,
} from '../canonical/index.js'
import type { AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION, AUTHORITY_TRANSITION_VERSION } from './index.js'

export declare const AUTHORITY_TRANSITION_OPERATIONS: AuthorityTransitionOperations
export type AuthorityTransitionOperation = (typeof AUTHORITY_TRANSITION_OPERATIONS)[number]
export declare const AUTHORITY_TRANSITION_STATES: AuthorityTransitionStates
export type AuthorityTransitionState = (typeof AUTHORITY_TRANSITION_STATES)[number]
export declare const AUTHORITY_REQUEST_OPERATIONS: AuthorityRequestOperations
export type AuthorityRequestOperation = (typeof AUTHORITY_REQUEST_OPERATIONS)[number]

export interface AuthorityTransitionEpochs {
  controllerGeneration?: ControllerGeneration
  bossBindingEpoch?: BossBindingEpoch
  participantBindingEpoch?: ParticipantBindingEpoch
  subscriberBindingEpoch?: SubscriberBindingEpoch
}
export interface AuthorityTransitionTarget {
  bossRunId?: string
  participantId?: string
  replacementParticipantId?: string
  controllerPrincipalId?: string
  credentialId?: string
  subscriberPrincipalId?: string
}

export interface AuthorityTransitionRecord {
  version: typeof AUTHORITY_TRANSITION_VERSION
  authorityTransitionId: string
  expectedBrokerRevision: BrokerRevision
  brokerRevision: BrokerRevision
  operation: AuthorityTransitionOperation
  target: AuthorityTransitionTarget
  prior: AuthorityTransitionEpochs
  proposed: AuthorityTransitionEpochs
  idempotencyKey: string
  state: AuthorityTransitionState
  prepareToken: string
  preparedAt: string
  committedAt?: string
  abortedAt?: string
  abortReason?: string
}
/** Returns `value` itself. */
export declare function parseAuthorityTransitionRecord(value: unknown): AuthorityTransitionRecord

export interface AuthorityTransitionEvent {
  version: typeof AUTHORITY_EVENT_VERSION
  eventId: string
  bossRunId?: string
  authorityTransitionId: string
  brokerRevision: BrokerRevision
  operation: AuthorityTransitionOperation
  state: 'committed'
  target: AuthorityTransitionTarget
  prior: AuthorityTransitionEpochs
  resulting: AuthorityTransitionEpochs
  occurredAt: string
}
/** Returns `value` itself. */
export declare function parseAuthorityTransitionEvent(value: unknown): AuthorityTransitionEvent

export type AuthorityTransitionRequest = {
  version: typeof AUTHORITY_REQUEST_VERSION
  operation: AuthorityRequestOperation
  requestId: string
  idempotencyKey: string
  authorityTransitionId: string
  expectedBrokerRevision: BrokerRevision
  payload:
    | {
      requestedOperation: AuthorityTransitionOperation
      target: AuthorityTransitionTarget
      prior: AuthorityTransitionEpochs
    }
    | { prepareToken: string }
    | { prepareToken: string; reason: string }
    | Record<string, never>
}
/** Returns `value` itself (the authority-socket request). */
export declare function parseAuthorityTransitionRequest(value: unknown): AuthorityTransitionRequest

/** Never throws; `value` is the record itself. */
export declare function validateAuthorityTransitionStore(value: unknown): StoreValidationResult<AuthorityTransitionRecord>
/** Never throws; `value` is the event itself. */
export declare function validateAuthorityEventStore(value: unknown): StoreValidationResult<AuthorityTransitionEvent>
