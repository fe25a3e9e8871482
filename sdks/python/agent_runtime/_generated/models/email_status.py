from enum import Enum


class EmailStatus(str, Enum):
    FAILED = "failed"
    QUEUED = "queued"
    RECEIVED = "received"
    SENT = "sent"

    def __str__(self) -> str:
        return str(self.value)
