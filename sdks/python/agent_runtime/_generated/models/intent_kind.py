from enum import Enum


class IntentKind(str, Enum):
    TRANSFER = "transfer"
    X402 = "x402"

    def __str__(self) -> str:
        return str(self.value)
