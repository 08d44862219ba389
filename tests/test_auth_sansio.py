"""The no-I/O parts of mcpkit.auth: challenges, discovery URLs, metadata validation, PKCE,
the RFC 9207 table, scope hierarchies, token bookkeeping, DPoP proofs, the token file."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcpkit.client.auth.dpop import DPoPKey
from mcpkit.client.auth.grants import check_authorization_response
from mcpkit.client.auth.pkce import Pkce, s256
from mcpkit.client.auth.token_store import FileTokenStore, IssuerRecord
from mcpkit.client.auth.tokens import ClientIdentity, TokenSet
from mcpkit.client.errors import AuthorizationError
from mcpkit.protocol.auth_challenge import build_challenge, parse_challenges
from mcpkit.protocol.auth_metadata import (
    AuthServerMetadata,
    MetadataError,
    ProtectedResourceMetadata,
    as_metadata_urls,
    canonical_resource,
    prm_urls,
    resource_matches,
)
from mcpkit.server.auth.access import AccessToken, expand_scopes


def test_parse_bearer_challenge_with_quoted_commas() -> None:  # AUTH-DISC-05
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="needs a, b and \\"c\\""'
    )
    (c,) = parse_challenges(header)
    assert c.scheme == "Bearer"
    assert c.error == "insufficient_scope"
    assert c.scope == ["files:read", "files:write"]
    assert c.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert c.get("ERROR_DESCRIPTION") == 'needs a, b and "c"'


def test_parse_several_challenges_and_token_params() -> None:
    cs = parse_challenges(['DPoP algs="ES256", error=use_dpop_nonce, Bearer realm="x"', "Basic"])
    assert [c.scheme for c in cs] == ["DPoP", "Bearer", "Basic"]
    assert cs[0].error == "use_dpop_nonce" and cs[0].get("algs") == "ES256"
    assert cs[1].get("realm") == "x"


def test_build_challenge_round_trips() -> None:  # AUTH-08, AUTH-29
    text = build_challenge("Bearer", {"error": "insufficient_scope", "scope": 'a "b"', "x": None})
    assert text == 'Bearer error="insufficient_scope", scope="a \\"b\\""'
    (c,) = parse_challenges(text)
    assert c.scope == ["a", '"b"']


def test_prm_urls_follow_the_spec_order() -> None:  # AUTH-DISC-04
    assert prm_urls("https://ex.com/public/mcp", "https://ex.com/custom.json") == [
        "https://ex.com/custom.json"
    ]
    assert prm_urls("https://ex.com/public/mcp") == [
        "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
        "https://ex.com/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://ex.com") == ["https://ex.com/.well-known/oauth-protected-resource"]


def test_as_metadata_urls_follow_the_spec_order() -> None:  # AUTH-DISC-06
    assert as_metadata_urls("https://auth.ex.com/tenant1") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.ex.com/.well-known/openid-configuration/tenant1",
        "https://auth.ex.com/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://auth.ex.com") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server",
        "https://auth.ex.com/.well-known/openid-configuration",
    ]


def test_metadata_issuer_must_be_identical() -> None:  # AUTH-DISC-07
    doc = {"issuer": "https://honest.example", "token_endpoint": "https://honest.example/t"}
    meta = AuthServerMetadata.from_json(doc, "https://honest.example")
    assert meta.token_endpoint == "https://honest.example/t"
    assert meta.token_endpoint_auth_methods_supported == ("client_secret_basic",)  # RFC 8414
    for expected in ("https://attacker.example", "https://honest.example/"):
        with pytest.raises(MetadataError):
            AuthServerMetadata.from_json(doc, expected)


def test_resource_matching() -> None:  # AUTH-18, AUTH-19, RFC 9728 §3.3
    assert resource_matches("https://mcp.ex.com/mcp", "https://mcp.ex.com/mcp")
    assert resource_matches("https://mcp.ex.com", "https://mcp.ex.com/mcp")
    assert resource_matches("HTTPS://MCP.EX.COM/mcp", "https://mcp.ex.com/mcp")
    assert not resource_matches("https://evil.example.com/mcp", "https://mcp.ex.com/mcp")
    assert not resource_matches("https://mcp.ex.com/other", "https://mcp.ex.com/mcp")
    assert not resource_matches("https://mcp.ex.com/mc", "https://mcp.ex.com/mcp")
    assert canonical_resource("https://MCP.ex.com/mcp/?q=1#f") == "https://mcp.ex.com/mcp"
    prm = ProtectedResourceMetadata.from_json(
        {"resource": "https://mcp.ex.com", "authorization_servers": ["https://as"]}
    )
    assert prm.resource == "https://mcp.ex.com"  # kept byte for byte, no "/" added
    with pytest.raises(MetadataError):
        ProtectedResourceMetadata.from_json({"authorization_servers": []})


def test_pkce_s256() -> None:  # AUTH-SEC-03 (RFC 7636 appendix B)
    assert s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == (
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
    p = Pkce.generate()
    assert p.method == "S256" and 43 <= len(p.verifier) <= 128 and p.challenge == s256(p.verifier)


@pytest.mark.parametrize(
    ("advertised", "response", "ok"),
    [
        (True, {"iss": "https://as.example"}, True),  # compare: equal
        (True, {}, False),  # advertised but absent: reject
        (False, {"iss": "https://as.example"}, True),  # not advertised, present: compare
        (False, {}, True),  # neither: proceed
        (False, {"iss": "https://evil.example.com"}, False),
        (True, {"iss": "https://as.example/"}, False),  # no trailing-slash normalisation
        (True, {"iss": "HTTPS://AS.EXAMPLE"}, False),  # no case folding
    ],
)
def test_iss_validation_table(advertised: bool, response: dict[str, str], ok: bool) -> None:
    # AUTH-14, AUTH-15
    response = {**response, "error": "access_denied"}
    if ok:
        check_authorization_response(response, "https://as.example", advertised)
    else:
        with pytest.raises(AuthorizationError) as info:
            check_authorization_response(response, "https://as.example", advertised)
        assert "access_denied" not in str(info.value)  # AUTH-16: the error is not shown


def test_scope_hierarchy() -> None:  # AUTH-33
    implies = {"admin": ["orders:write"], "orders:write": ["orders:read"]}
    assert expand_scopes(["admin"], implies) == {"admin", "orders:write", "orders:read"}
    token = AccessToken("alice", expand_scopes(["orders:write"], implies), client_id="c")
    assert token.has_scopes({"orders:read"}) and not token.has_scopes({"admin"})
    assert token.claim("sub") == "alice" and token.principal == "alice"
    assert AccessToken(None, client_id="svc").principal == "svc"


def test_token_set_bookkeeping() -> None:
    t = TokenSet.from_response(
        {"access_token": "a", "expires_in": 3600, "refresh_token": "r"},
        requested_scope=("x",),
        resource="https://r",
    )
    assert t.scope == ("x",) and not t.expired() and t.refresh_token == "r"
    short = TokenSet.from_response(
        {"access_token": "b", "expires_in": 5}, requested_scope=(), resource=None
    )
    assert short.expired()  # inside the refresh leeway
    assert t.refreshed(short).refresh_token == "r"  # a refresh answer may omit it
    assert TokenSet.from_json(t.to_json()) == t
    with pytest.raises(ValueError):
        TokenSet.from_response({"token_type": "Bearer"}, requested_scope=(), resource=None)


def test_dpop_proof_claims() -> None:  # RFC 9449 §4.2
    key = DPoPKey()
    assert key.remember_nonce("https://rs.example/mcp", "n-1")
    assert not key.remember_nonce("https://rs.example/other", "n-1")
    proof = key.proof("post", "https://rs.example/mcp?x=1#f", access_token="tok")
    decoded = jwt.decode(proof, ECKey.import_key(key.public_jwk), algorithms=["ES256"])
    assert decoded.header["typ"] == "dpop+jwt" and "d" not in decoded.header["jwk"]
    c = decoded.claims
    assert c["htm"] == "POST" and c["htu"] == "https://rs.example/mcp" and c["nonce"] == "n-1"
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert c["ath"] == digest
    other = jwt.decode(key.proof("GET", "https://as.example/t"), ECKey.import_key(key.public_jwk))
    assert "nonce" not in other.claims and "ath" not in other.claims
    assert other.claims["jti"] != c["jti"]


async def test_file_token_store(tmp_path: Path) -> None:  # AUTH-REG-07, AUTH-SEC-01
    path = tmp_path / "sub" / "tokens.json"
    store = FileTokenStore(path)
    assert await store.load("https://as1") is None
    record = IssuerRecord(
        ClientIdentity("c1", "s1", "client_secret_basic", "https://as1", redirect_uris=("u",)),
        {"https://mcp/mcp": TokenSet("a", refresh_token="r", scope=("x",))},
    )
    await store.save("https://as1", record)
    await FileTokenStore(path).save("https://as2", IssuerRecord())
    again = await FileTokenStore(path).load("https://as1")
    assert again is not None and again.client == record.client and again.tokens == record.tokens
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_configured_client_identities() -> None:  # AUTH-REG-01, AUTH-REG-04, AUTH-REG-08
    from mcpkit.auth import AuthorizationCode, ClientCredentials

    meta = AuthServerMetadata.from_json(
        {
            "issuer": "https://as",
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "client_id_metadata_document_supported": True,
        },
        "https://as",
    )
    pre = AuthorizationCode(client_id="app", client_secret="pw", issuer="https://as")
    assert pre.client_identity(meta) == ClientIdentity(
        "app", "pw", "client_secret_post", "https://as"
    )
    with pytest.raises(AuthorizationError):  # registered with another authorization server
        AuthorizationCode(client_id="app", issuer="https://old-as").client_identity(meta)
    cimd = AuthorizationCode(client_metadata_url="https://app.example/client.json")
    assert cimd.client_identity(meta) == ClientIdentity("https://app.example/client.json")
    assert AuthorizationCode().client_identity(meta) is None  # DCR decides
    key = ClientCredentials("svc", private_key_pem="pem").client_identity(meta)
    assert key.auth_method == "private_key_jwt"
