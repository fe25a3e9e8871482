from enum import Enum


class IntentStatus(str, Enum):
    AUTHORIZED = "authorized"
    CONFIRMED = "confirmed"
    EXECUTED = "executed"
    EXPIRED = "expired"
    FAILED = "failed"
    PENDING_CONFIRMATION = "pending_confirmation"
    REJECTED = "rejected"
    SUBMITTED = "submitted"

    def __str__(self) -> str:
        return str(self.value)
