// CommonJS consumers of the same declarations (compiled, never run).
import core = require("@ctliz/agent-intercom-core");
import canonical = require("@ctliz/agent-intercom-core/canonical");
import protocolV4 = require("@ctliz/agent-intercom-core/protocol-v4");

const hash: string = canonical.canonicalHash("d", { b: 2 });
const vectors: readonly protocolV4.ProtocolV4Vector[] = protocolV4.INTERCOM_PROTOCOL_V4_VECTORS;
const codes: readonly string[] = core.INTERCOM_ERROR_CODES;
export = { hash, vectors, codes };
