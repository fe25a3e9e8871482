from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

if TYPE_CHECKING:
    from ..models.transfer_intent_out import TransferIntentOut


T = TypeVar("T", bound="X402FetchFailedOut")


@_dataclass
class X402FetchFailedOut:
    """A resource that failed after it was paid: why, and the payment's intent, kept.

    Attributes:
        detail (str):
        intent (TransferIntentOut):
    """

    detail: str
    intent: "TransferIntentOut"
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        detail = self.detail

        intent = self.intent.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "detail": detail,
                "intent": intent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transfer_intent_out import TransferIntentOut

        d = dict(src_dict)
        detail = d.pop("detail")

        intent = TransferIntentOut.from_dict(d.pop("intent"))

        x402_fetch_failed_out = cls(
            detail=detail,
            intent=intent,
        )

        x402_fetch_failed_out.additional_properties = d
        return x402_fetch_failed_out

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
