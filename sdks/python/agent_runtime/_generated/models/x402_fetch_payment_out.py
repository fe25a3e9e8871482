from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.transfer_intent_out import TransferIntentOut
    from ..models.x402_fetch_payment_out_settlement_type_0 import (
        X402FetchPaymentOutSettlementType0,
    )


T = TypeVar("T", bound="X402FetchPaymentOut")


@_dataclass
class X402FetchPaymentOut:
    """The payment a fetch made: its intent, and what the server said of its settlement.

    Attributes:
        intent (TransferIntentOut):
        settlement (Union['X402FetchPaymentOutSettlementType0', None, Unset]): The server's `PAYMENT-RESPONSE`, decoded,
            when it sent one.
    """

    intent: "TransferIntentOut"
    settlement: Union["X402FetchPaymentOutSettlementType0", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.x402_fetch_payment_out_settlement_type_0 import (
            X402FetchPaymentOutSettlementType0,
        )

        intent = self.intent.to_dict()

        settlement: Union[None, Unset, dict[str, Any]]
        if isinstance(self.settlement, Unset):
            settlement = UNSET
        elif isinstance(self.settlement, X402FetchPaymentOutSettlementType0):
            settlement = self.settlement.to_dict()
        else:
            settlement = self.settlement

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "intent": intent,
            }
        )
        if settlement is not UNSET:
            field_dict["settlement"] = settlement

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transfer_intent_out import TransferIntentOut
        from ..models.x402_fetch_payment_out_settlement_type_0 import (
            X402FetchPaymentOutSettlementType0,
        )

        d = dict(src_dict)
        intent = TransferIntentOut.from_dict(d.pop("intent"))

        def _parse_settlement(data: object) -> Union["X402FetchPaymentOutSettlementType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                settlement_type_0 = X402FetchPaymentOutSettlementType0.from_dict(data)

                return settlement_type_0
            except:  # noqa: E722
                pass
            return cast(Union["X402FetchPaymentOutSettlementType0", None, Unset], data)

        settlement = _parse_settlement(d.pop("settlement", UNSET))

        x402_fetch_payment_out = cls(
            intent=intent,
            settlement=settlement,
        )

        x402_fetch_payment_out.additional_properties = d
        return x402_fetch_payment_out

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
