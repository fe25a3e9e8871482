"""The agent-runtime client library. `api` and `models` are generated from docs/openapi.json
(`_generated`, by `make sdks`); the rest is the hand-written layer over them.

    from agent_runtime import AgentRuntime, api, models
    client = AgentRuntime()  # AGENT_RUNTIME_KEY, AGENT_RUNTIME_URL
    me = client.call(api.agents.get_agent_me)
"""

import importlib
import pkgutil

from ._generated import api, models
from ._retry import RetryPolicy
from .aio import AsyncAgentRuntime
from .client import AgentRuntime
from .errors import (
    AgentRuntimeError,
    ApiError,
    AuthenticationError,
    BadGatewayError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PaymentNotApproved,
    PermissionDeniedError,
    PolicyError,
    RateLimitError,
    RequestTimeoutError,
    ServiceUnavailableError,
    ValidationError,
    WaitTimeout,
    WebhookVerificationError,
)
from .webhooks import verify_signature, verify_webhook
from .x402 import AsyncX402Client, Paid, X402Client

# Every route function is reachable as api.<tag>.<operation>, without importing each module.
for _module in pkgutil.walk_packages(api.__path__, api.__name__ + "."):
    importlib.import_module(_module.name)

__all__ = [
    "AgentRuntime",
    "AgentRuntimeError",
    "ApiError",
    "AsyncAgentRuntime",
    "AsyncX402Client",
    "AuthenticationError",
    "BadGatewayError",
    "BadRequestError",
    "ConflictError",
    "NotFoundError",
    "Paid",
    "PaymentNotApproved",
    "PermissionDeniedError",
    "PolicyError",
    "RateLimitError",
    "RequestTimeoutError",
    "RetryPolicy",
    "ServiceUnavailableError",
    "ValidationError",
    "WaitTimeout",
    "WebhookVerificationError",
    "X402Client",
    "api",
    "models",
    "verify_signature",
    "verify_webhook",
]
