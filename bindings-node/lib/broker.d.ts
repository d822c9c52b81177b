// Hand-written declarations of the broker subpath. Literal facts come from ../facts.js, which
// `cargo xtask gen` writes from the Rust crates.
import { IntercomError } from "../index.js";
import type { AgentDirEnv, AlreadyStopped, BrokerHealth, DefaultAgentDir, DefaultIdleExitMs, DefaultLogLevel, DefaultMaxFrameBytes, DeliveryState, IntercomDirName, LogLevel, MaxIdleExitMs, SocketFileName, StopReason } from "../facts.js";

export interface BrokerOptions {
  /** Agent directory (default: the variable {@link AgentDirEnv}, else {@link DefaultAgentDir} in
   * the home directory). */
  agentDir?: string;
  /** Socket path (default: <agentDir>/{@link IntercomDirName}/{@link SocketFileName}). */
  socketPath?: string;
  /** Exit this long after the last session leaves, at most {@link MaxIdleExitMs}; 0 never exits on
   * idle (default {@link DefaultIdleExitMs}). */
  idleExitMs?: number;
  /** What goes to stderr (default {@link DefaultLogLevel}). */
  logLevel?: LogLevel;
  /** Any limit by name, e.g. { max_sessions: 256, rate_capacity: 480 } (docs/broker.md). */
  settings?: Record<string, number | string>;
}

/** A broker running in this process, on its own thread. */
export declare class Broker {
  readonly socketPath: string;
  /** The remote-access gateway socket (`<intercomDir>/remote-gateway.sock`): remote principals
   * register there with an access credential. */
  readonly gatewayPath: string;
  readonly intercomDir: string;
  /** True until close() or idle exit. */
  readonly running: boolean;
  /** Stops the broker and waits until its files are removed; returns why it stopped
   * ({@link AlreadyStopped} when it had been closed before). */
  close(): StopReason | AlreadyStopped;
}

/** Starts the broker of an agent directory in this process. Throws IntercomError with code
 * BROKER_ALREADY_RUNNING, BROKER_STORE, BROKER_IO, UNKNOWN_KEY (an option it does not take),
 * UNSUPPORTED_VALUE (NaN, Infinity, ...) or INVALID_ARGUMENT. */
export declare function startBroker(options?: BrokerOptions): Broker;
/** Uses the running broker or starts one here; concurrent callers end with exactly one broker. */
export declare function ensureBroker(options?: BrokerOptions & { waitMs?: number }): Promise<{
  started: boolean;
  socketPath: string;
  broker?: Broker;
}>;
/** Probes a socket with a health frame: compatible (a protocol-v4 broker with this package's
 * remote-access contract), incompatible (a health_ok that is not) or unreachable. */
export declare function brokerHealth(socketPath: string, timeoutMs?: number): Promise<BrokerHealth>;
export declare function brokerSocketPath(options?: BrokerOptions): string;
export declare function agentDirFromEnv(env?: Record<string, string | undefined>): string;
export declare const MAX_FRAME_BYTES: DefaultMaxFrameBytes;

/** SessionInfo as the broker sends it. It never carries a scope. */
export interface SessionInfo {
  id: string;
  name?: string;
  cwd: string;
  model: string;
  pid: number;
  startedAt: number;
  lastActivity: number;
  status?: string;
  trustedLocal?: boolean;
  origin?: "local" | "remote";
  /** A remote session's place in its delegation tree (origin "remote" only). */
  remoteHostId?: string;
  parentSessionId?: string;
  rootSessionId?: string;
  generation?: number;
  canDelegate?: boolean;
  depth?: number;
  maxDepth?: number;
  maxChildren?: number;
}
export interface SessionRegistration {
  cwd: string;
  model: string;
  pid: number;
  startedAt: number;
  lastActivity: number;
  name?: string;
  status?: string;
  runtimeInstanceId?: string;
}
export interface Attachment {
  type: "file" | "snippet" | "context";
  name: string;
  content: string;
  language?: string;
}
export interface Message {
  id: string;
  timestamp: number;
  replyTo?: string;
  expectsReply?: boolean;
  content: { text: string; attachments?: Attachment[]; control?: { type: string; version: number; data?: unknown } };
}
export type OutgoingMessage = string | { text: string } | (Partial<Pick<Message, "id" | "timestamp" | "replyTo" | "expectsReply">> & Pick<Message, "content">);
export interface IncomingMessage {
  deliveryId: string;
  from: SessionInfo;
  message: Message;
  /** Acknowledges (automatic unless connect({ autoAck: false })). */
  ack(): void;
}
/** A delivery failure: code is the broker's failure code; accepted tells whether it had been accepted. */
export interface DeliveryError extends IntercomError {
  readonly accepted: boolean;
  readonly messageId: string;
}
/** The opt-in extensions of a send (docs/hub.md). Without them a send is protocol v4's. */
export interface SendOptions {
  /** To the full id of a known session that is not connected: queue it until that session
   * registers again (the send resolves with queued: true; a full queue rejects with QUEUE_FULL;
   * after the broker's offline_ttl_ms a 'delivery_failed' event with QUEUE_EXPIRED). Names and
   * prefixes never queue. */
  queue?: boolean;
  /** Emit 'read' when the recipient has read the message (its markRead). */
  receipts?: boolean;
}
/** What a send resolves to: delivered (acknowledged by the recipient), or queued for it. */
export interface Delivery {
  messageId: string;
  deliveryId: string;
  /** Present when the message was queued for an offline recipient (SendOptions.queue). */
  queued?: true;
}
/** A message of this session and its delivery, as 'queued', 'read' and 'delivered' report it. */
export interface DeliveryRef {
  messageId: string;
  deliveryId: string;
}
export type { DeliveryState };

/** A remote registration's credential: a one-time enrollment token, or the session credential
 * the broker issued at enrollment, to reconnect as the same principal. */
export type RemoteRegistrationAccess =
  | { enrollmentToken: string }
  | { sessionCredential: string; sessionId: string; generation: number };
/** A remote session credential: what the gateway's access_control requests carry. */
export type RemoteSessionAccess = { sessionCredential: string; sessionId: string; generation: number };
/** The remote-access contract the broker and this package share. */
export interface RemoteAccessContract {
  feature: string;
  policySemanticsVersion: number;
  policySemanticsHash: string;
}
/** The broker-owned provenance of a remote registration. */
export interface RemoteAccessMetadata {
  origin: "remote";
  remoteHostId: string;
  parentSessionId: string;
  rootSessionId: string;
  generation: number;
  canDelegate: boolean;
  depth: number;
  maxDepth: number;
  maxChildren: number;
  /** Only after an enrollment: keep it to reconnect with. */
  sessionCredential?: string;
}
export interface Registered {
  sessionId: string;
  /** Present for a remote registration. */
  access?: RemoteAccessMetadata;
  /** Present for a remote registration. */
  remoteAccess?: RemoteAccessContract;
}
/** A remote principal as access_control reports it. */
export interface RemotePrincipalSummary {
  id: string;
  name: string;
  parentSessionId: string;
  rootSessionId: string;
  remoteHostId: string;
  generation: number;
  policy: "remote-tree";
  canDelegate: boolean;
  depth: number;
  maxDepth: number;
  maxChildren: number;
  state: "active" | "revoked";
  expiresAt: number;
  createdAt: number;
  updatedAt: number;
  connected: boolean;
}
/** An enrollment's terms (the local socket's issue_enrollment takes all of them, the gateway's
 * issue_child_enrollment only name and the optional ones). */
export interface EnrollmentRequest {
  name: string;
  parentSessionId?: string;
  rootSessionId?: string;
  remoteHostId?: string;
  ttlMs?: number;
  expiresAt?: number;
  canDelegate?: boolean;
  maxDepth?: number;
  maxChildren?: number;
}
/** An access_control request: the frame without its type. requestId is a fresh UUID unless given. */
export type AccessControlRequest =
  | { requestId?: string; adminToken: string; action: "issue_enrollment"; enrollment: EnrollmentRequest & { parentSessionId: string; rootSessionId: string; remoteHostId: string } }
  | { requestId?: string; adminToken: string; action: "revoke_subtree"; principalId: string }
  | { requestId?: string; adminToken: string; action: "inspect_tree"; principalId: string }
  | { requestId?: string; adminToken: string; action: "adopt_subtree"; principalId: string; newParentSessionId: string }
  | { requestId?: string; access: RemoteSessionAccess; action: "issue_child_enrollment"; enrollment: EnrollmentRequest }
  | { requestId?: string; access: RemoteSessionAccess; action: "inspect_tree"; principalId?: string };
/** The broker's access_control_result frame. */
export type AccessControlResult =
  | { type: "access_control_result"; requestId: string; action: "issue_enrollment"; enrollmentToken: string; expiresAt: number }
  | { type: "access_control_result"; requestId: string; action: "revoke_subtree"; changedPrincipalIds: string[] }
  | { type: "access_control_result"; requestId: string; action: "inspect_tree" | "adopt_subtree"; principals: RemotePrincipalSummary[] }
  | { type: "access_control_result"; requestId: string; action: "issue_child_enrollment"; enrollmentToken: string; expiresAt: number; parentSessionId: string };

export declare class IntercomClient {
  /** Set once registered. */
  readonly sessionId: string | undefined;
  readonly closed: boolean;
  /** Registers; with access (on the remote gateway) as a remote principal, the broker's answer
   * checked against the remote-access contract and provenance (else REMOTE_ACCESS_INCOMPATIBLE).
   * sessionId cannot go with access. Rejects with the broker's error code. */
  register(options: { session: SessionRegistration; sessionId?: string; scopeId?: string; access?: RemoteRegistrationAccess }): Promise<Registered>;
  list(): Promise<SessionInfo[]>;
  /** Resolves when the receiver acknowledged (or, with options.queue, when the broker queued it
   * for an offline recipient); rejects with a DeliveryError. */
  send(to: string, message: OutgoingMessage, options?: SendOptions): Promise<Delivery>;
  ask(to: string, message: OutgoingMessage, options?: SendOptions): Promise<Delivery>;
  reply(to: string, replyTo: string, message: OutgoingMessage, options?: SendOptions): Promise<Delivery>;
  /** Tells the broker a received message was shown to the model (message_read); a sender that
   * asked for receipts hears 'read'. */
  markRead(deliveryId: string): void;
  /** The state of one of this session's own messages (another session's is "unknown"). */
  deliveryStatus(messageId: string): Promise<DeliveryState>;
  defer(messageId: string): Promise<{ applied: boolean; action: "defer"; messageId: string }>;
  cancel(messageId: string): Promise<{ applied: boolean; action: "cancel"; messageId: string }>;
  presence(update: { name?: string; status?: string; model?: string }): void;
  unregister(options?: { preserveAsks?: boolean }): void;
  close(): void;
  on(event: "message", listener: (message: IncomingMessage) => void): this;
  on(event: "session_joined" | "presence_update", listener: (frame: { type: string; session: SessionInfo }) => void): this;
  on(event: "session_left", listener: (frame: { type: "session_left"; sessionId: string }) => void): this;
  on(event: "ask_deferred", listener: (frame: { type: "ask_deferred"; messageId: string; fromSessionId: string }) => void): this;
  on(event: "ask_cancelled", listener: (frame: { type: "ask_cancelled"; messageId: string; fromSessionId: string; reason: "cancelled" | "expired" | "delivery_failed" | "session_disconnected" | "authorization_revoked" }) => void): this;
  on(event: "broker_error", listener: (error: IntercomError) => void): this;
  /** A send with queue was queued for its offline recipient. */
  on(event: "queued" | "read" | "delivered", listener: (delivery: DeliveryRef) => void): this;
  /** The failure of a message no pending send waits for (a queued one's QUEUE_EXPIRED ...). */
  on(event: "delivery_failed", listener: (error: DeliveryError) => void): this;
  on(event: "close", listener: () => void): this;
}
/** Connects to a broker (a socket path, or options naming the agent directory or socket). Broker
 * options such as idleExitMs are not connect's: UNKNOWN_KEY. With `access`, the client is a
 * remote principal: without a socketPath it dials the agent directory's remote gateway
 * (`remote-gateway.sock`), and register() sends that credential unless given another. */
export declare function connect(options?: string | { agentDir?: string; socketPath?: string; autoAck?: boolean; access?: RemoteRegistrationAccess }): Promise<IntercomClient>;
/** Sends one access_control request on a connection of its own (the local socket of agentDir,
 * or socketPath: the remote gateway for access requests) and resolves to the broker's result.
 * Rejects with the broker's code (ACCESS_DENIED, INVALID_REQUEST), NOT_CONNECTED (no answer
 * within timeoutMs, default 10 s), INVALID_FRAME, or INVALID_ARGUMENT / UNKNOWN_KEY before
 * anything is sent. */
export declare function accessControl(options: { agentDir?: string; socketPath?: string; request: AccessControlRequest; timeoutMs?: number }): Promise<AccessControlResult>;
