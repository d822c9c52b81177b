#!/usr/bin/env python3
"""Cross-checks vectors/http-signatures-v1.json against an independent RFC 9421 implementation,
the Python package `http-message-signatures` (3.0.0), both ways:

1. every message our implementation signed or accepted (the RFC's B.2.6 request, our signed
   requests and bound responses) verifies with the Python verifier, its Content-Digest included;
   every one we refuse as SIGNATURE_INVALID is refused by it too;
2. every request of a sign-request case, signed by the Python signer (its own parameter order:
   created, keyid, alg, expires, nonce, tag; its own Content-Digest), verifies with ours, through
   the C ABI (`aic_contract_call("httpsig.verifyRequest", ...)` of target/debug/libagent_intercom.so).

Time is ours to check (the vectors fix their clock), so the Python verifier's clock checks are off.
The package keeps an explicit default port in `@target-uri` (`https://h:443/a2a`), where we use the
target URI as RFC 9110 §4.2.3 normalises it and as a server reconstructs it from `Host`
(`https://h/a2a`); so the Python side is given that normalised URI (`normalised` below).
Not run by CI (it needs the package). Usage, after `cargo build -p agent-intercom-ffi`:

    python3 -m venv /tmp/sig-venv && /tmp/sig-venv/bin/pip install http-message-signatures==3.0.0
    /tmp/sig-venv/bin/python scripts/crosscheck-http-signatures.py [path/to/libagent_intercom.so]
"""

import base64
import ctypes
import datetime
import json
import pathlib
import sys

from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, algorithms
from http_message_signatures.exceptions import HTTPMessageSignaturesException, InvalidSignature
from http_message_signatures.resolvers import HTTPSignatureKeyResolver

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = json.loads((ROOT / "vectors" / "http-signatures-v1.json").read_text())
KEYS = DOC["keys"]


def raw(value):
    if isinstance(value, str):
        return value.encode()
    return base64.b64decode(value["base64"])


class Headers:
    """Field lines in order (what the package's resolver reads), with mapping writes for signing."""

    def __init__(self, lines):
        # The package reads strings; bytes that are not UTF-8 travel as Latin-1, as it documents.
        self.lines = [(name, raw(value).decode("latin-1")) for name, value in lines]

    def items(self):
        return list(self.lines)

    def __iter__(self):
        return iter([name for name, _ in self.lines])

    def __contains__(self, name):
        return any(n.lower() == name.lower() for n, _ in self.lines)

    def __getitem__(self, name):
        values = [v for n, v in self.lines if n.lower() == name.lower()]
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __setitem__(self, name, value):
        del self[name]
        self.lines.append((name, value))

    def __delitem__(self, name):
        self.lines = [(n, v) for n, v in self.lines if n.lower() != name.lower()]


def normalised(uri):
    """The target URI as a server reconstructs it: scheme and host lowercased, no default port."""
    scheme, rest = uri.split("://", 1)
    scheme = scheme.lower()
    cut = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    authority, tail = rest[:cut], rest[cut:]
    host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if port in ("", {"https": "443", "http": "80"}.get(scheme)):
        authority = host.lower()
    else:
        authority = f"{host.lower()}:{port}"
    return f"{scheme}://{authority}{tail if tail.startswith('/') else '/' + tail}"


class Request:
    def __init__(self, j):
        self.method, self.url, self.headers = j["method"], normalised(j["targetUri"]), Headers(j["headers"])


class Response:
    def __init__(self, j, request):
        self.status_code, self.headers, self.request = j["status"], Headers(j["headers"]), request


class Keys(HTTPSignatureKeyResolver):
    def __init__(self, ring):
        self.ring = ring

    def resolve_public_key(self, key_id):
        name = self.ring.get(key_id)
        return load_pem_public_key(KEYS[name]["publicKey"].encode()) if name else None

    def resolve_private_key(self, key_id):
        return load_pem_private_key(KEYS[self.ring[key_id]]["privateKey"].encode(), None)


class Verifier(HTTPMessageVerifier):
    def validate_created_and_expires(self, sig_input, max_age=None):
        pass  # the vectors' clock is fixed; time is checked by our runners


def python_verifies(message, ring, body, tag):
    verifier = Verifier(signature_algorithm=algorithms.ED25519, key_resolver=Keys(ring))
    verifier.verify(message, max_age=None, expect_tag=tag, body=body)


def with_lines(j, lines):
    return {**j, "headers": j["headers"] + lines}


def signed_lines(expected):
    return [["Content-Digest", expected["contentDigest"]], ["Signature-Input", expected["signatureInput"]],
            ["Signature", expected["signature"]]]


def tag_of(profile):
    if profile.startswith("line-"):
        return "rfc9421-ed25519@1"
    return "agent-intercom-a2a@1" if profile == "a2a-request" else "agent-intercom-a2a-response@1"


class Core:
    """Our verifier, through the C ABI."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.aic_contract_call.restype = ctypes.c_uint32
        self.lib.aic_string_free.argtypes = [ctypes.c_void_p]

    def call(self, op, args):
        out, out_len, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        text = json.dumps(args).encode()
        status = self.lib.aic_contract_call(op.encode(), len(op), text, len(text), ctypes.byref(out),
                                            ctypes.byref(out_len), ctypes.byref(err))
        assert status == 0, f"{op}: status {status}"
        answer = json.loads(ctypes.string_at(out, out_len.value))
        self.lib.aic_string_free(out)
        assert answer["ok"], answer
        return answer["value"]


def main():
    lib = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "debug" / "libagent_intercom.so"
    core = Core(lib)
    failures, counts = [], {"python accepts ours": 0, "python refuses as we do": 0, "ours accepts python's": 0}
    for c in DOC["cases"]:
        cid, kind = c["id"], c["kind"]
        try:
            if kind == "rfc-signature":
                message = Request(with_lines(c["message"], [["Signature-Input", c["signatureInput"]],
                                                             ["Signature", c["signature"]]]))
                python_verifies(message, {"test-key-ed25519": c["key"]}, None, None)
                counts["python accepts ours"] += 1
            elif kind in ("sign-request", "sign-response"):
                body = c["body"].encode()
                signed = with_lines(c["request" if kind == "sign-request" else "response"], signed_lines(c["expected"]))
                message = Request(signed) if kind == "sign-request" else Response(signed, Request(c["request"]))
                python_verifies(message, c["verify"]["keyring"], body, tag_of(c["profile"]))
                counts["python accepts ours"] += 1
                if kind == "sign-request":
                    crosssign(core, c)
                    counts["ours accepts python's"] += 1
            elif kind in ("verify-request", "verify-response"):
                body = c["body"].encode()
                message = Request(c["request"]) if kind == "verify-request" else \
                    Response(c["response"], Request(c["request"]))
                code = c["expected"].get("code", "OK")
                if code == "OK":
                    python_verifies(message, c["keyring"], body, tag_of(c["profile"]))
                    counts["python accepts ours"] += 1
                elif code == "SIGNATURE_INVALID":
                    try:
                        python_verifies(message, c["keyring"], body, tag_of(c["profile"]))
                    except (InvalidSignature, HTTPMessageSignaturesException):
                        counts["python refuses as we do"] += 1
                    else:
                        failures.append(f"{cid}: the Python verifier accepts what we refuse")
        except Exception as e:  # noqa: BLE001 - every failure is reported with its case
            failures.append(f"{cid}: {type(e).__name__}: {e}")
    for name, n in counts.items():
        print(f"{name}: {n}")
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print("crosscheck-http-signatures: ok")


def crosssign(core, c):
    """The Python signer signs the case's request; our verifier must accept it."""
    request = Request(c["request"])
    signer_j = c["signer"]
    components = [line.split(": ", 1)[0] for line in c["expected"]["base"].split("\n")[:-1]]
    components = [json.loads(x) for x in components]
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519,
                               key_resolver=Keys({signer_j["keyid"]: signer_j["key"]}))
    utc = datetime.timezone.utc
    signer.sign(request, key_id=signer_j["keyid"], label="a2a", tag=tag_of(c["profile"]), nonce=signer_j["nonce"],
                created=datetime.datetime.fromtimestamp(signer_j["created"], utc),
                expires=datetime.datetime.fromtimestamp(signer_j["expires"], utc),
                covered_component_ids=components, body=c["body"].encode())
    lines = [[n, v] for n, v in request.headers.items()]
    answer = core.call("httpsig.verifyRequest", [
        c["profile"], {"method": request.method, "targetUri": c["request"]["targetUri"], "headers": lines},
        c["body"], c["verify"]["nowMs"],
        {k: KEYS[v]["publicKey"] for k, v in c["verify"]["keyring"].items()}])
    want = c["verify"]["expected"]
    assert answer.get("ok") == want["ok"] and answer.get("code") == want.get("code"), (answer, lines)
    if answer["ok"]:
        signature_input = request.headers["Signature-Input"]
        assert ";created=" in signature_input and ";keyid=" in signature_input, signature_input


if __name__ == "__main__":
    main()
