"""Run by tests/it/sdks.rs in a virtualenv given only the wheel and what pip installed with it: the
package requires httpx alone (sdks.md), neither attrs nor python-dateutil is there, every module
imports without them, and a generated model reads the server's timestamps. Prints a JSON summary."""

import datetime
import importlib
import importlib.metadata
import importlib.util
import json
import pkgutil
import re
import sys

import agent_runtime
from agent_runtime import models

requires = importlib.metadata.requires("agent-runtime") or []
names = [re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower() for requirement in requires]
assert names == ["httpx"], f"the package requires {requires}, not httpx alone"
for absent in ("attr", "attrs", "dateutil"):
    assert importlib.util.find_spec(absent) is None, f"{absent} is installed beside the package"

modules = [found.name for found in pkgutil.walk_packages(agent_runtime.__path__, "agent_runtime.")]
for module in modules:
    importlib.import_module(module)

# The server writes RFC 3339 in UTC with `Z` and the fraction's trailing zeros dropped, which
# Python 3.9's datetime.fromisoformat refuses.
intent = models.TransferIntentOut.from_dict(
    {
        "id": "0b6b7c2e-8a9c-4d5e-9f00-000000000001",
        "kind": "transfer",
        "status": "executed",
        "asset": "USDC",
        "chain": "base",
        "recipient_address": "0x000000000000000000000000000000000000dEaD",
        "amount_atomic": "1000",
        "created_at": "2026-11-30T09:34:07.12345Z",
        "updated_at": "2026-11-30T09:34:07Z",
        "confirmed_at": "2026-11-30T09:34:07.123456Z",
        "approvals": {"required": 1, "received": 1},
    }
)
utc = datetime.timezone.utc
assert intent.created_at == datetime.datetime(2026, 11, 30, 9, 34, 7, 123450, utc), intent
assert intent.confirmed_at == datetime.datetime(2026, 11, 30, 9, 34, 7, 123456, utc), intent
assert intent.updated_at.utcoffset() == datetime.timedelta(0), intent

print(
    json.dumps(
        {
            "python": ".".join(map(str, sys.version_info[:3])),
            "requires": requires,
            "modules": len(modules),
        }
    )
)
