from enum import Enum


class X402FetchStatus(str, Enum):
    FREE = "free"
    PAID = "paid"

    def __str__(self) -> str:
        return str(self.value)
