"""Hooks of the fuzz run (scripts/fuzz.sh).

Waits for a code block until a code arrives or `timeout` seconds pass, 300 by default. The fuzz
agent receives no code while it runs, so every wait the schema allows would hold the worker for its
whole timeout: a valid timeout above one second, or none at all, is sent as one second. Timeouts
outside 0..300, with a fraction, or of another type are sent as generated, so their 422 is still
checked.

An x402 fetch makes a request to its `url`: the fuzz run never reaches out to the hosts it makes
up. Every URL written as a string is sent as one on the loopback address, which the service
refuses (422 naming the rule) before any request, as it refuses every private target here; the
other fields are sent as generated.
"""

import math

import schemathesis

WAITS = {"/v1/sms/wait-for-code", "/v1/codes/wait"}
FETCH = "/v1/wallet/x402/fetch"
LOOPBACK_URL = "https://127.0.0.1:9/fuzz"
LONGEST_WAIT_SECS = 1
SPEC_MAX_WAIT_SECS = 300


def is_whole_number(value):
    """An integer as JSON has it, 34 or 34.0; a bool is an int to Python, not to JSON."""
    if type(value) is float:
        return math.isfinite(value) and value.is_integer()
    return type(value) is int


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if not isinstance(case.body, dict):
        return
    if case.operation.path == FETCH and isinstance(case.body.get("url"), str):
        case.body["url"] = LOOPBACK_URL
    if case.operation.path not in WAITS:
        return
    timeout = case.body.get("timeout", SPEC_MAX_WAIT_SECS)
    if is_whole_number(timeout) and LONGEST_WAIT_SECS < timeout <= SPEC_MAX_WAIT_SECS:
        case.body["timeout"] = LONGEST_WAIT_SECS
