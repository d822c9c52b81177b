"""The signature profile rfc9421-ed25519@1 as the peer and our client both apply it (section 4
of the line's requirement notes): the covered components, the parameters, the time rules, and
the small message views `http-message-signatures` 3.0.0 signs and verifies."""

import base64
import datetime
import secrets

from http_message_signatures import HTTPMessageVerifier

PROTOCOL = 'rfc9421-ed25519@1'
LABEL = 'a2a'
REQUEST_COMPONENTS = (
    '@method', '@authority', '@path', '@query', 'content-type', 'content-digest',
    'a2a-version', 'a2a-extensions', 'intercom-issuer', 'intercom-audience',
)
# `"signature";req;key="a2a"` is the request's own signature: it binds a response to it.
RESPONSE_COMPONENTS = (
    '@status', 'content-type', 'content-digest', 'intercom-issuer', 'intercom-audience',
    '"@method";req', '"@authority";req', '"@path";req', '"signature";req;key="a2a"',
)
# A refusal of a request that carries no usable `a2a` signature cannot bind to it.
UNBOUND_RESPONSE_COMPONENTS = RESPONSE_COMPONENTS[:-1]
PARAMS = frozenset({'created', 'expires', 'nonce', 'keyid', 'alg', 'tag'})
SKEW = 30          # |now - created| at most
MAX_WINDOW = 300   # expires - created at most


def nonce() -> str:
    """16 random bytes, base64url without padding."""
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b'=').decode()


def utc(ts: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)


def serialized(component: str) -> str:
    """A component as the Signature-Input member lists it: `"@status"`, `"@path";req`."""
    return component if component.startswith('"') else f'"{component}"'


class Headers:
    """Field lines in order, with the small mapping interface the library needs."""

    def __init__(self, pairs=()):
        self.pairs = list(pairs)

    def items(self):
        return list(self.pairs)

    def __iter__(self):
        return iter(dict.fromkeys(name for name, _ in self.pairs))

    def __contains__(self, name: str) -> bool:
        return any(n.lower() == name.lower() for n, _ in self.pairs)

    def get(self, name: str, default=None):
        values = [v for n, v in self.pairs if n.lower() == name.lower()]
        return ', '.join(values) if values else default

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        self.__delitem__(name)
        self.pairs.append((name, value))

    def __delitem__(self, name: str) -> None:
        self.pairs = [(n, v) for n, v in self.pairs if n.lower() != name.lower()]

    def raw(self) -> list:
        """ASGI header pairs: lowercase name bytes, Latin-1 value bytes."""
        return [(n.lower().encode('latin-1'), v.encode('latin-1')) for n, v in self.pairs]


class RequestView:
    def __init__(self, method: str, url: str, headers: Headers):
        self.method, self.url, self.headers = method, url, headers


class ResponseView:
    def __init__(self, status_code: int, headers: Headers, request: RequestView):
        self.status_code, self.headers, self.request = status_code, headers, request


class OwnClockVerifier(HTTPMessageVerifier):
    """The library's verifier without its own wall-clock checks: the callers apply the
    profile's time rules (SKEW, now < expires, MAX_WINDOW) against their own clock, which a
    test may move (the peer's clock_offset_seconds)."""

    def validate_created_and_expires(self, sig_input, max_age=None):
        return None
