from enum import Enum


class ScopeName(str, Enum):
    AGENTREAD = "agent:read"
    CODESREAD = "codes:read"
    EMAILREAD = "email:read"
    EMAILSEND = "email:send"
    EVENTSREAD = "events:read"
    KEYSMANAGE = "keys:manage"
    SMSREAD = "sms:read"
    WALLETPAY = "wallet:pay"
    WALLETREAD = "wallet:read"
    WEBHOOKSMANAGE = "webhooks:manage"

    def __str__(self) -> str:
        return str(self.value)
