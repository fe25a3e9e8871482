"""Unit tests of the hand-written layer, against httpx's MockTransport: no server."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import pathlib
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

import agent_runtime
from agent_runtime import (
    AgentRuntime,
    AsyncAgentRuntime,
    PermissionDeniedError,
    PolicyError,
    RetryPolicy,
    ServiceUnavailableError,
    WaitTimeout,
    WebhookVerificationError,
    X402Client,
    api,
    models,
    verify_webhook,
)
from agent_runtime._generated.client import AuthenticatedClient
from agent_runtime._generated.types import UNSET, isoparse
from agent_runtime._retry import RetryTransport
from agent_runtime._sse import messages
from agent_runtime.client import event_of, with_idempotency
from agent_runtime.errors import error_for, policy_rule
from agent_runtime.webhooks import sign, verify_signature

INTENT = {
    "id": "0b6b7c2e-8a9c-4d5e-9f00-000000000001",
    "kind": "transfer",
    "status": "pending_confirmation",
    "asset": "USDC",
    "chain": "base",
    "recipient_address": "0x000000000000000000000000000000000000dEaD",
    "amount_atomic": "1000",
    "created_at": "2026-11-25T10:00:00Z",
    "updated_at": "2026-11-25T10:00:00Z",
    "approvals": {"required": 1, "received": 0},
}
SEND = models.WalletSendRequest(to="0x000000000000000000000000000000000000dEaD", amount_atomic="1")


class Recorder:
    """A MockTransport handler answering from a list, keeping every request it saw."""

    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer


def runtime(handler, **policy) -> tuple[AgentRuntime, list[float]]:
    slept: list[float] = []
    client = AgentRuntime("ark_test", "http://runtime.test", retry=RetryPolicy(**policy))
    # The retries' sleeps are recorded instead of slept.
    transport = RetryTransport(httpx.MockTransport(handler), client.retry, sleep=slept.append)
    for api_client in (client.api, client._waiting, client._streaming):
        api_client._httpx_args["transport"] = transport
    return client, slept


def body_of(request: httpx.Request) -> dict:
    return json.loads(request.content)


# --- settings -------------------------------------------------------------------------------


def test_the_key_and_url_default_to_the_environment(monkeypatch):
    monkeypatch.setenv("AGENT_RUNTIME_KEY", "ark_from_env")
    monkeypatch.setenv("AGENT_RUNTIME_URL", "http://env.test/")
    client = AgentRuntime()
    assert client.base_url == "http://env.test"
    assert client.api.token == "ark_from_env"
    monkeypatch.delenv("AGENT_RUNTIME_KEY")
    with pytest.raises(agent_runtime.AgentRuntimeError, match="AGENT_RUNTIME_KEY"):
        AgentRuntime()


# --- the generated code: dataclasses, and timestamps read without python-dateutil ------------

UTC = timezone.utc
TWO_EAST = timezone(timedelta(hours=2))
FIVE_30_WEST = timezone(-timedelta(hours=5, minutes=30))


@pytest.mark.parametrize(
    "text, expected",
    [
        # What the server writes (RFC 3339 in UTC, the fraction's trailing zeros dropped), which
        # Python 3.9's datetime.fromisoformat refuses for its `Z` and most fraction lengths.
        ("2026-11-30T09:34:07.123456Z", datetime(2026, 11, 30, 9, 34, 7, 123456, UTC)),
        ("2026-11-30T09:34:07.12345Z", datetime(2026, 11, 30, 9, 34, 7, 123450, UTC)),
        ("2026-11-30T09:34:07.1Z", datetime(2026, 11, 30, 9, 34, 7, 100000, UTC)),
        ("2026-11-30T09:34:07Z", datetime(2026, 11, 30, 9, 34, 7, tzinfo=UTC)),
        ("2026-11-30T09:34:07.123456789Z", datetime(2026, 11, 30, 9, 34, 7, 123456, UTC)),
        ("2026-11-30t09:34:07z", datetime(2026, 11, 30, 9, 34, 7, tzinfo=UTC)),
        # Other offsets, with or without their colon, and what has none.
        ("2026-11-30T11:34:07.5+02:00", datetime(2026, 11, 30, 11, 34, 7, 500000, TWO_EAST)),
        ("2026-11-30T04:04:07-0530", datetime(2026, 11, 30, 4, 4, 7, tzinfo=FIVE_30_WEST)),
        ("2026-11-30 09:34:07", datetime(2026, 11, 30, 9, 34, 7)),
        ("2026-11-30", datetime(2026, 11, 30)),
    ],
)
def test_timestamps_are_read_in_the_forms_the_server_writes(text, expected):
    parsed = isoparse(text)
    assert parsed == expected and parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize("text", ["", "30/11/2026", "2026-11-30T09", "2026-11-30T09:34:07Q"])
def test_what_is_not_a_timestamp_is_refused(text):
    with pytest.raises(ValueError):
        isoparse(text)


def test_a_model_reads_the_servers_timestamps_keeps_unknown_fields_and_writes_them_back():
    raw = dict(INTENT, updated_at="2026-11-30T09:34:07.12345Z", confirmed_at=None, extra="kept")
    intent = models.TransferIntentOut.from_dict(raw)
    assert dataclasses.is_dataclass(intent)
    assert intent.created_at == datetime(2026, 11, 25, 10, tzinfo=UTC)
    assert intent.updated_at == datetime(2026, 11, 30, 9, 34, 7, 123450, UTC)
    assert intent.confirmed_at is None and intent.tx_hash is UNSET
    assert intent.additional_keys == ["extra"] and intent["extra"] == "kept"
    written = intent.to_dict()
    assert written["updated_at"] == "2026-11-30T09:34:07.123450+00:00"
    assert written["confirmed_at"] is None and "tx_hash" not in written
    assert written["extra"] == "kept"
    assert models.TransferIntentOut.from_dict(written) == intent


def test_a_client_with_more_headers_is_a_new_one_and_the_first_is_unchanged():
    first = AuthenticatedClient("http://runtime.test", "ark_test", timeout=httpx.Timeout(3.0))
    second = first.with_headers({"X-Trace": "1"})
    assert second is not first and second.token == "ark_test"
    assert second.get_httpx_client().headers["x-trace"] == "1"
    assert second.get_httpx_client().headers["authorization"] == "Bearer ark_test"
    assert "x-trace" not in first.get_httpx_client().headers
    assert first.get_httpx_client().timeout == httpx.Timeout(3.0)


# --- idempotency and retries ----------------------------------------------------------------


def test_a_send_gets_an_idempotency_key_that_a_retry_after_429_repeats():
    handler = Recorder(
        httpx.Response(429, headers={"Retry-After": "2"}, json={"detail": "Too many sends"}),
        httpx.Response(200, json=INTENT),
    )
    client, slept = runtime(handler)
    intent = client.call(api.wallet.create_wallet_send, body=SEND)
    assert str(intent.id) == INTENT["id"]
    first, second = (body_of(request) for request in handler.requests)
    assert first["idempotency_key"] and first == second
    assert slept == [2.0]
    assert handler.requests[0].headers["authorization"] == "Bearer ark_test"


def test_a_callers_key_is_kept_and_header_routes_get_the_header():
    given = with_idempotency(
        api.wallet.create_wallet_send,
        {"body": models.WalletSendRequest("0x1", "1", idempotency_key="mine")},
    )
    assert given["body"].idempotency_key == "mine"
    mail = with_idempotency(api.email.send_email, {"body": None})
    assert len(mail["idempotency_key"]) == 36
    assert "idempotency_key" not in with_idempotency(api.agents.get_agent_me, {})


def test_every_route_that_takes_an_idempotency_key_in_the_document_is_given_one():
    document = pathlib.Path(__file__).parents[3] / "docs" / "openapi.json"
    spec = json.loads(document.read_text())
    schemas = spec["components"]["schemas"]
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            header = any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            name = body["schema"]["$ref"].rsplit("/", 1)[1] if body else None
            in_body = name is not None and "idempotency_key" in schemas[name].get("properties", {})
            if not (header or in_body):
                continue
            tag = operation["tags"][0]
            module = getattr(getattr(api, tag), operation["operationId"])
            kwargs = {}
            if name:
                kwargs["body"] = getattr(models, name).from_dict(_minimal(schemas[name]))
            given = with_idempotency(module, kwargs)
            key = given.get("idempotency_key") or given["body"].idempotency_key
            assert key, f"{method} {path}"


def _minimal(schema: dict) -> dict:
    """The smallest body a schema takes: its required fields, strings or objects."""
    values = {"object": {}, "array": [], "integer": 0}
    return {
        name: values.get(schema["properties"][name].get("type"), "x")
        for name in schema.get("required", [])
    }


def test_retries_stop_at_their_count_and_the_error_is_typed():
    handler = Recorder(*[httpx.Response(503, json={"detail": "The database is unavailable"})] * 4)
    client, slept = runtime(handler, max_retries=3, base_delay=0.5, max_delay=8)
    with pytest.raises(ServiceUnavailableError) as raised:
        client.call(api.agents.get_agent_me)
    assert raised.value.status == 503 and raised.value.detail == "The database is unavailable"
    assert len(handler.requests) == 4 and len(slept) == 3
    assert all(
        low <= wait <= high for wait, (low, high) in zip(slept, [(0.25, 0.5), (0.5, 1), (1, 2)])
    )


def test_retries_stop_at_their_time_budget():
    handler = Recorder(httpx.Response(429, headers={"Retry-After": "90"}, json={"detail": "later"}))
    client, slept = runtime(handler, max_seconds=60)
    with pytest.raises(agent_runtime.RateLimitError) as raised:
        client.call(api.agents.get_agent_me)
    assert slept == [] and raised.value.retry_after == 90


def test_a_write_without_a_key_is_not_repeated_after_a_503_nor_a_broken_answer():
    def broken(request):
        raise httpx.ReadError("connection reset", request=request)

    for failure in (httpx.Response(503, json={"detail": "down"}), broken):
        handler = Recorder(failure, httpx.Response(200, json={}))
        client, _ = runtime(handler)
        # PATCH /v1/webhooks/{id} takes no idempotency key.
        with pytest.raises((ServiceUnavailableError, httpx.ReadError)):
            body = models.WebhookUpdateRequest.from_dict({"enabled": True})
            client.call(api.webhooks.update_webhook, webhook_id=uuid.uuid4(), body=body)
        assert len(handler.requests) == 1


def test_a_connection_never_made_is_retried_for_any_request():
    def refused(request):
        raise httpx.ConnectError("refused", request=request)

    handler = Recorder(refused, httpx.Response(200, json={"items": []}))
    client, slept = runtime(handler)
    assert client.call(api.keys.list_keys).items == []
    assert len(slept) == 1


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "detail, rule, limit, remaining",
    [
        (
            "Spend policy violation: amount 30 exceeds the per-transaction maximum of 25",
            "max_per_tx",
            25,
            None,
        ),
        (
            "Spend policy violation: amount 30000000 exceeds the daily maximum of 50000000; "
            "20000000 is still available in the rolling 24 hours",
            "max_daily",
            50000000,
            20000000,
        ),
        (
            "Spend policy violation (rule max_weekly): amount 9 exceeds the weekly maximum of 10; "
            "1 is still available in the rolling 7 days",
            "max_weekly",
            10,
            1,
        ),
        (
            "Spend policy violation: amount 5 exceeds the daily maximum of 4 for this recipient; "
            "0 is still available to it in the rolling 24 hours",
            "recipient_max_daily",
            4,
            0,
        ),
        (
            "Spend policy violation: recipient 0xdEaD is not on the wallet's allowlist",
            "allowlist",
            None,
            None,
        ),
        (
            "Refused by rule max_amount: the payment asks 1500, above max_amount_atomic 1000",
            "max_amount",
            1000,
            None,
        ),
        (
            "Spend policy violation (rule x402_disabled): x402 payments are turned off",
            "x402_disabled",
            None,
            None,
        ),
    ],
)
def test_a_policy_refusal_names_its_rule_and_what_is_left(detail, rule, limit, remaining):
    error = error_for(403, json.dumps({"detail": detail}).encode(), {})
    assert isinstance(error, PolicyError)
    assert (error.rule, error.limit, error.remaining) == (rule, limit, remaining)
    assert policy_rule(detail) == (rule, limit, remaining)


def test_a_missing_scope_is_a_permission_error_naming_it():
    error = error_for(403, b'{"detail": "This key lacks the scope wallet:pay"}', {})
    assert type(error) is PermissionDeniedError and error.scope == "wallet:pay"


def test_validation_errors_keep_their_items():
    items = [{"loc": ["body", "to"], "msg": "bad", "type": "value_error"}]
    error = error_for(422, json.dumps({"detail": items}).encode(), {})
    assert isinstance(error, agent_runtime.ValidationError) and error.detail == items


# --- pages ----------------------------------------------------------------------------------


def test_cursor_pages_are_followed_to_the_last():
    pages = [
        {"items": [INTENT], "next_cursor": "c1"},
        {"items": [dict(INTENT, id="0b6b7c2e-8a9c-4d5e-9f00-000000000002")], "next_cursor": None},
    ]
    handler = Recorder(*[httpx.Response(200, json=page) for page in pages])
    client, _ = runtime(handler)
    intents = list(client.paginate(api.wallet.list_wallet_intents, limit=1))
    assert [str(intent.id)[-1] for intent in intents] == ["1", "2"]
    assert handler.requests[1].url.params["cursor"] == "c1"


def test_offset_lists_stop_at_a_short_page():
    sms = {
        "message_id": "0b6b7c2e-8a9c-4d5e-9f00-000000000003",
        "direction": "inbound",
        "from_number": "+15550001111",
        "to_number": "+15550002222",
        "raw_payload": {
            "source": "sandbox",
            "provider_message_id": "p1",
            "from_number": "+15550001111",
            "to_number": "+15550002222",
            "raw_message": "hello",
        },
        "created_at": "2026-11-25T10:00:00Z",
    }
    handler = Recorder(httpx.Response(200, json=[sms, sms]), httpx.Response(200, json=[sms]))
    client, _ = runtime(handler)
    assert len(list(client.paginate(api.sms.list_sms_messages, limit=2))) == 3
    assert handler.requests[1].url.params["offset"] == "2"


# --- waits ----------------------------------------------------------------------------------

CODE = {
    "code": "385920",
    "channel": "email",
    "message_id": "m1",
    "received_at": "2026-11-25T10:00:00Z",
    "from": "alice@example.org",
    "raw_message": "Your code is 385920",
    "sender_authenticated": False,
}


def test_a_code_wait_calls_again_after_a_408_each_call_under_its_own_request_id():
    handler = Recorder(
        httpx.Response(408, json={"detail": "no code"}), httpx.Response(200, json=CODE)
    )
    client, _ = runtime(handler)
    code = client.wait_for_code(channels=["email"], timeout=30)
    assert code.code == "385920"
    first, second = (body_of(request) for request in handler.requests)
    assert first["request_id"] != second["request_id"] and first["channels"] == ["email"]
    assert 28 <= first["timeout"] <= 30


def test_a_code_wait_ends_at_the_callers_deadline():
    handler = Recorder(*[httpx.Response(408, json={"detail": "no code"})] * 3)
    client, _ = runtime(handler)
    with pytest.raises(WaitTimeout):
        client.wait_for_code(timeout=0.2)


def test_a_decision_wait_reads_the_intent_until_it_leaves_pending():
    statuses = ["pending_confirmation", "pending_confirmation", "confirmed"]
    handler = Recorder(*[httpx.Response(200, json=dict(INTENT, status=s)) for s in statuses])
    client, _ = runtime(handler)
    intent = client.wait_for_transfer_decision(INTENT["id"], interval=0.01)
    assert str(intent.status) == "confirmed" and len(handler.requests) == 3


# --- the event stream -----------------------------------------------------------------------


def event(seq: int) -> dict:
    return {
        "id": f"evt_{seq}",
        "seq": seq,
        "type": "sms.received",
        "timestamp": "2026-11-25T10:00:00Z",
        "data": {
            "message_id": INTENT["id"],
            "from_number": "+1555",
            "to_number": "+1666",
            "code": None,
        },
    }


def sse(*events: dict, comment: bool = True) -> bytes:
    text = "retry: 3000\n\n" + (": keep-alive\n\n" if comment else "")
    for item in events:
        text += f"id: {item['seq']}\nevent: {item['type']}\ndata: {json.dumps(item)}\n\n"
    return text.encode()


def test_sse_messages_are_read_as_the_standard_says():
    lines = [
        "retry: 3000",
        "",
        ": comment",
        "id: 7",
        "event: x",
        "data: a",
        "data: b",
        "",
        "data: c",
        "",
    ]
    read = list(messages(lines))
    assert [(m.event, m.data, m.id, m.retry) for m in read] == [
        ("message", None, None, 3000),
        ("x", "a\nb", "7", None),
        ("message", "c", "7", None),
    ]


class BrokenStream(httpx.SyncByteStream):
    """Some bytes, then the connection breaks."""

    def __init__(self, data: bytes):
        self.data = data

    def __iter__(self):
        yield self.data
        raise httpx.ReadError("the connection was cut")


def test_the_stream_resumes_after_a_disconnect_with_last_event_id_losing_and_repeating_nothing():
    handler = Recorder(
        httpx.Response(200, stream=BrokenStream(sse(event(1), event(2)))),
        # The server replays after Last-Event-ID; an event at or before it is not read twice.
        httpx.Response(200, content=sse(event(2), event(3))),
    )
    client, _ = runtime(handler)
    stream = client.events(types=["sms.received"], reconnect_delay=0)
    seen = [next(stream).seq for _ in range(3)]
    assert seen == [1, 2, 3]
    assert type(event_of(event(1)).data).__name__ == "SmsReceivedData"
    first, second = handler.requests
    assert "last-event-id" not in first.headers and first.url.params["types"] == "sms.received"
    assert second.headers["last-event-id"] == "2"


def test_a_reset_is_reported_and_reading_goes_on():
    resets = []
    handler = Recorder(httpx.Response(200, content=b"event: reset\ndata: {}\n\n" + sse(event(9))))
    client, _ = runtime(handler)
    assert next(client.events(after=1, on_reset=lambda: resets.append(1))).seq == 9
    assert resets == [1] and handler.requests[0].headers["last-event-id"] == "1"


# --- webhooks -------------------------------------------------------------------------------

# The Standard Webhooks specification's published example (as crates/standard-webhooks pins it).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
VECTOR_BODY = b'{"test": 2432232314}'


def test_the_specifications_vector_verifies():
    assert (
        sign(VECTOR_SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, VECTOR_BODY)
        == (VECTOR_HEADERS["webhook-signature"])
    )
    verify_signature(VECTOR_BODY, VECTOR_HEADERS, VECTOR_SECRET, now=1614265330)


def test_a_changed_body_a_wrong_secret_an_old_timestamp_and_missing_headers_are_refused():
    other = "whsec_" + base64.b64encode(b"another secret of 32 bytes......").decode()
    for body, headers, secrets, now in [
        (b'{"test": 2432232315}', VECTOR_HEADERS, VECTOR_SECRET, 1614265330),
        (VECTOR_BODY, VECTOR_HEADERS, other, 1614265330),
        (VECTOR_BODY, VECTOR_HEADERS, VECTOR_SECRET, 1614265330 + 301),
        (VECTOR_BODY, {"webhook-id": "msg"}, VECTOR_SECRET, 1614265330),
    ]:
        with pytest.raises(WebhookVerificationError):
            verify_signature(body, headers, secrets, now=now)


def test_any_of_several_secrets_verifies_and_the_event_is_parsed():
    old, new = VECTOR_SECRET, "whsec_" + base64.b64encode(b"x" * 32).decode()
    body = json.dumps(event(4)).encode()
    headers = {
        "Webhook-Id": "evt_4",
        "Webhook-Timestamp": "1700000000",
        "Webhook-Signature": " ".join(sign(s, "evt_4", 1700000000, body) for s in (new, old)),
    }
    assert verify_webhook(body, headers, [old], now=1700000000).seq == 4
    assert verify_webhook(body.decode(), headers, [new, old], now=1700000100).id == "evt_4"


# --- x402 -----------------------------------------------------------------------------------

CHALLENGE = {
    "x402Version": 2,
    "resource": {"url": "http://seller.test/report"},
    "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "1500", "payTo": "0x1"}],
}
AUTHORIZED = {
    "status": "authorized",
    "header": "PAYMENT-SIGNATURE",
    "payment_signature": "c2lnbmVk",
    "valid_before": "2026-11-25T11:00:00Z",
    "intent": dict(INTENT, kind="x402", status="authorized"),
}
PENDING = {
    "status": "pending_confirmation",
    "intent": dict(INTENT, kind="x402"),
    "approval_url": "http://runtime.test/console/intents/1",
}


def seller(request: httpx.Request) -> httpx.Response:
    if request.headers.get("payment-signature") == "c2lnbmVk":
        settlement = base64.b64encode(b'{"success": true, "transaction": "0xabc"}').decode()
        return httpx.Response(200, headers={"PAYMENT-RESPONSE": settlement}, json={"paid": True})
    header = base64.b64encode(json.dumps(CHALLENGE).encode()).decode()
    return httpx.Response(402, headers={"PAYMENT-REQUIRED": header}, json={})


def test_a_402_is_authorized_and_the_request_repeated_with_the_payment_header():
    handler = Recorder(httpx.Response(200, json=AUTHORIZED))
    client, _ = runtime(handler)
    buyer = X402Client(
        client, max_amount_atomic=2000, http=httpx.Client(transport=httpx.MockTransport(seller))
    )
    paid = buyer.get("http://seller.test/report")
    assert paid.response.json() == {"paid": True}
    assert paid.settlement == {"success": True, "transaction": "0xabc"}
    sent = body_of(handler.requests[0])
    assert sent["payment_required"] == CHALLENGE and sent["max_amount_atomic"] == "2000"
    assert sent["idempotency_key"] and "resource_url" not in sent


def test_a_payment_waiting_for_the_operators_is_asked_again_under_its_key_once_approved():
    handler = Recorder(
        httpx.Response(202, json=PENDING),
        httpx.Response(200, json=dict(INTENT, kind="x402", status="confirmed")),
        httpx.Response(200, json=AUTHORIZED),
    )
    client, _ = runtime(handler)
    told = []
    buyer = X402Client(
        client,
        max_amount_atomic="2000",
        http=httpx.Client(transport=httpx.MockTransport(seller)),
        on_pending=lambda pending: told.append(pending.approval_url),
    )
    assert buyer.get("http://seller.test/report").response.status_code == 200
    assert told == [PENDING["approval_url"]]
    first, last = body_of(handler.requests[0]), body_of(handler.requests[2])
    assert first == last


def test_a_free_resource_is_not_paid():
    free = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, text="free")))
    client, _ = runtime(Recorder())
    paid = X402Client(client, max_amount_atomic=1, http=free).get("http://seller.test/free")
    assert paid.authorization is None and paid.response.text == "free"


# --- async ----------------------------------------------------------------------------------


def test_the_async_client_retries_with_the_same_key_and_follows_pages():
    from agent_runtime._retry import AsyncRetryTransport

    handler = Recorder(
        httpx.Response(429, headers={"Retry-After": "0"}, json={"detail": "later"}),
        httpx.Response(200, json=INTENT),
        httpx.Response(200, json={"items": [INTENT], "next_cursor": None}),
    )

    async def run():
        client = AsyncAgentRuntime(
            "ark_test", "http://runtime.test", retry=RetryPolicy(base_delay=0.01)
        )
        transport = AsyncRetryTransport(httpx.MockTransport(handler), client.retry)
        client.api._httpx_args["transport"] = transport
        intent = await client.call(api.wallet.create_wallet_send, body=SEND)
        listed = [item async for item in client.paginate(api.wallet.list_wallet_intents)]
        return intent, listed

    intent, listed = asyncio.run(run())
    assert str(intent.id) == INTENT["id"] and len(listed) == 1
    assert body_of(handler.requests[0]) == body_of(handler.requests[1])
