from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from ..models.x402_authorization_status import X402AuthorizationStatus

if TYPE_CHECKING:
    from ..models.transfer_intent_out import TransferIntentOut


T = TypeVar("T", bound="X402PendingOut")


@_dataclass
class X402PendingOut:
    """A payment that waits for operators: retry with the same `idempotency_key` once approved.

    Attributes:
        approval_url (str): Where an operator decides on the payment.
        intent (TransferIntentOut):
        status (X402AuthorizationStatus): Whether an x402 payment was signed, or waits for operators.
    """

    approval_url: str
    intent: "TransferIntentOut"
    status: X402AuthorizationStatus
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        approval_url = self.approval_url

        intent = self.intent.to_dict()

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "approval_url": approval_url,
                "intent": intent,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transfer_intent_out import TransferIntentOut

        d = dict(src_dict)
        approval_url = d.pop("approval_url")

        intent = TransferIntentOut.from_dict(d.pop("intent"))

        status = X402AuthorizationStatus(d.pop("status"))

        x402_pending_out = cls(
            approval_url=approval_url,
            intent=intent,
            status=status,
        )

        x402_pending_out.additional_properties = d
        return x402_pending_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
