// Compiled (never run) by scripts/test-types.sh: the ./transport subpath's declarations.
import {
  signEnvelope, verifyEnvelope, verifyEnvelopeSequence, envelopeSigningInput, IntercomError,
  MAX_ENVELOPE_BYTES, ENVELOPE_CONTENT_TYPES, TRANSPORT_ENVELOPE_FORMAT_VERSION,
  type EnvelopeFields, type EnvelopeKeyring, type EnvelopeSigningKey, type VerifiedEnvelope,
  type EnvelopeOutcome, type EnvelopeContentType,
} from "@ctliz/agent-intercom-core/transport";
import * as cjsStyle from "@ctliz/agent-intercom-core/transport";

const fields: EnvelopeFields = {
  format_version: TRANSPORT_ENVELOPE_FORMAT_VERSION,
  sent_at: "2026-05-01T12:00:00.000Z",
  sender: { agent_id: "a", agent_type: "t", daemon_fingerprint: "f", capabilities: [] },
  recipient: null,
  content_type: "a2a_task",
  payload: { title: "x", n: [1, null, true] },
  metadata: {},
  nonce: "nonce-0123456789ab",
  expires_at: "2026-05-01T12:10:00.000Z",
};
const key: EnvelopeSigningKey = { kind: "hmac-sha256", key_id: "k", secret: "c2VjcmV0" };
const keyring: EnvelopeKeyring = { "hmac-sha256": { k: "c2VjcmV0" } };
const text: string = signEnvelope(fields, key);
const verified: VerifiedEnvelope = verifyEnvelope(text, keyring, { now: 0, skewMs: 1 });
const kind: "ed25519" | "hmac-sha256" = verified.envelope.signature.kind;
const outcomes: EnvelopeOutcome[] = verifyEnvelopeSequence([text], keyring);
const code: string | undefined = outcomes[0]?.ok === false ? outcomes[0].code : undefined;
const sha: string = envelopeSigningInput(text).sha256;
const max: 2097152 = MAX_ENVELOPE_BYTES;
const types: readonly EnvelopeContentType[] = ENVELOPE_CONTENT_TYPES;
const isError = (e: unknown): boolean => e instanceof IntercomError && e.code === "SIGNATURE_INVALID";
const same: typeof verifyEnvelope = cjsStyle.verifyEnvelope;
// @ts-expect-error content types are the four names
const wrong: EnvelopeFields = { ...fields, content_type: "a2a_artifact" };
// @ts-expect-error an Ed25519 key carries private_key, not secret
const badKey: EnvelopeSigningKey = { kind: "ed25519", key_id: "k", secret: "x" };
export { kind, code, sha, max, types, isError, same, wrong, badKey };
