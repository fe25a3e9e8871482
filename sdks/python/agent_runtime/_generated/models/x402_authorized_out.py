import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from ..models.x402_authorization_status import X402AuthorizationStatus
from ..types import isoparse

if TYPE_CHECKING:
    from ..models.transfer_intent_out import TransferIntentOut


T = TypeVar("T", bound="X402AuthorizedOut")


@_dataclass
class X402AuthorizedOut:
    """A signed payment authorization: repeat the request with `header` set to `payment_signature`.

    Attributes:
        header (str): `PAYMENT-SIGNATURE` (version 2) or `X-PAYMENT` (version 1).
        intent (TransferIntentOut):
        payment_signature (str): The header's value; single use, valid until `valid_before`.
        status (X402AuthorizationStatus): Whether an x402 payment was signed, or waits for operators.
        valid_before (datetime.datetime):
    """

    header: str
    intent: "TransferIntentOut"
    payment_signature: str
    status: X402AuthorizationStatus
    valid_before: datetime.datetime
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        header = self.header

        intent = self.intent.to_dict()

        payment_signature = self.payment_signature

        status = self.status.value

        valid_before = self.valid_before.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "header": header,
                "intent": intent,
                "payment_signature": payment_signature,
                "status": status,
                "valid_before": valid_before,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transfer_intent_out import TransferIntentOut

        d = dict(src_dict)
        header = d.pop("header")

        intent = TransferIntentOut.from_dict(d.pop("intent"))

        payment_signature = d.pop("payment_signature")

        status = X402AuthorizationStatus(d.pop("status"))

        valid_before = isoparse(d.pop("valid_before"))

        x402_authorized_out = cls(
            header=header,
            intent=intent,
            payment_signature=payment_signature,
            status=status,
            valid_before=valid_before,
        )

        x402_authorized_out.additional_properties = d
        return x402_authorized_out

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
