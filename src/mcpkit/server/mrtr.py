"""Multi round-trip requests on the stateless wire: read a retry, answer `input_required`."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import InvalidParams
from ..protocol.meta import RequestMeta
from .inputs import InputRequired, ModernInputs
from .ownership import Owner
from .request_state import StateSealer, StateStore, salient_digest


class MrtrEngine:
    def __init__(self, sealer: StateSealer, store: StateStore | None = None) -> None:
        self.sealer = sealer
        self.store = store

    async def begin(
        self, method: str, params: dict[str, Any], meta: RequestMeta, owner: Owner
    ) -> ModernInputs:
        """The answers this request carries. Tampered or foreign state → -32602 (MRTR-09)."""
        answers: dict[str, Any] = {}
        data: dict[str, Any] = {}
        if "inputResponses" in params and not isinstance(params["inputResponses"], dict):
            raise InvalidParams('Invalid params: "inputResponses" must be an object (MRTR-23)')
        token = params.get("requestState")
        if token is None:
            # A first request may carry answers already (a client that knows the questions):
            # they are client input like any retry's, validated when the handler asks.
            answers = dict(params.get("inputResponses") or {})
        else:
            payload = self.sealer.open(
                token, method=method, digest=salient_digest(method, params), owner=owner
            )
            if self.store is not None and not await self.store.consume(
                payload["j"], self.sealer.ttl_seconds
            ):
                raise InvalidParams("Invalid params: requestState was already used (single use)")
            answers = dict(payload.get("a") or {})
            data = dict(payload.get("s") or {})
            responses = params.get("inputResponses") or {}
            for key in payload.get("k") or ():
                if key in responses:  # MRTR-25: unknown extra entries are ignored
                    answers[key] = responses[key]
        return ModernInputs(meta, answers, data)

    def input_required(
        self,
        signal: InputRequired,
        inputs: ModernInputs,
        method: str,
        params: dict[str, Any],
        owner: Owner,
    ) -> dict[str, Any]:
        """MRTR-05/06/12: the questions, and a sealed state carrying everything answered so far."""
        state = self.sealer.seal(
            {
                "v": 1,
                "m": method,
                "d": salient_digest(method, params),
                "p": owner,
                "a": inputs.answers,
                "s": inputs.state,
                "k": list(signal.requests),
            }
        )
        return {
            "resultType": "input_required",
            "inputRequests": signal.requests,
            "requestState": state,
        }
