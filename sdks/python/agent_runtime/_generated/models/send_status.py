from enum import Enum


class SendStatus(str, Enum):
    SENT = "sent"

    def __str__(self) -> str:
        return str(self.value)
