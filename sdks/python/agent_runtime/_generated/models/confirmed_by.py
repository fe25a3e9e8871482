from enum import Enum


class ConfirmedBy(str, Enum):
    OPERATOR = "operator"
    POLICY = "policy"

    def __str__(self) -> str:
        return str(self.value)
