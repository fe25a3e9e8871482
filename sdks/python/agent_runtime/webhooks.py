"""Verifying the webhooks the service posts (Standard Webhooks 1.0): `webhook-id`,
`webhook-timestamp` and `webhook-signature`, one `v1,<base64>` HMAC-SHA256 of `id.timestamp.body`
per live secret; any of the endpoint's secrets may have signed (after a rotation, both do)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping

from ._generated.models import EventOut
from .client import event_of
from .errors import WebhookVerificationError

TOLERANCE_SECONDS = 300


def _key(secret: str) -> bytes:
    text = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as invalid:
        raise ValueError("a webhook secret is whsec_ and base64") from invalid


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `v1,<base64>` signature of `body` under `secret`."""
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_signature(
    body: bytes | str,
    headers: Mapping[str, str],
    secrets: str | list[str],
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Raises WebhookVerificationError unless one of `secrets` signed `body` within `tolerance`
    seconds of `now`."""
    raw = body.encode() if isinstance(body, str) else body
    lowered = {name.lower(): value for name, value in headers.items()}
    webhook_id = lowered.get("webhook-id")
    stamp = lowered.get("webhook-timestamp", "")
    signatures = lowered.get("webhook-signature")
    if not webhook_id or not signatures or not stamp.isdigit():
        raise WebhookVerificationError("missing or malformed webhook headers")
    timestamp = int(stamp)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("the webhook's timestamp is outside the tolerance")
    offered = [part for part in signatures.split(" ") if part.startswith("v1,")]
    for secret in [secrets] if isinstance(secrets, str) else secrets:
        expected = sign(secret, webhook_id, timestamp, raw)
        if any(hmac.compare_digest(expected, candidate) for candidate in offered):
            return
    raise WebhookVerificationError("no signature matches the webhook's secrets")


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secrets: str | list[str],
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> EventOut:
    """The event a verified webhook carries; WebhookVerificationError when it does not verify."""
    verify_signature(body, headers, secrets, tolerance=tolerance, now=now)
    return event_of(json.loads(body))
