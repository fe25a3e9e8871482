from enum import Enum


class X402AuthorizationStatus(str, Enum):
    AUTHORIZED = "authorized"
    PENDING_CONFIRMATION = "pending_confirmation"

    def __str__(self) -> str:
        return str(self.value)
