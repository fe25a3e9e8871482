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
    from ..models.x402_check_request_payment_required import (
        X402CheckRequestPaymentRequired,
    )


T = TypeVar("T", bound="X402CheckRequest")


@_dataclass
class X402CheckRequest:
    """An x402 challenge for the spend policy to judge, as a payment would be, without reserving.

    Attributes:
        payment_required (X402CheckRequestPaymentRequired): The challenge as the server answered it, as `POST
            /v1/wallet/x402/authorize` takes it.
        max_amount_atomic (Union[None, Unset, str]): The agent's own ceiling in atomic units: a challenge asking more is
            refused (403, rule
            `max_amount`) before the policy is asked.
    """

    payment_required: "X402CheckRequestPaymentRequired"
    max_amount_atomic: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        payment_required = self.payment_required.to_dict()

        max_amount_atomic: Union[None, Unset, str]
        if isinstance(self.max_amount_atomic, Unset):
            max_amount_atomic = UNSET
        else:
            max_amount_atomic = self.max_amount_atomic

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "payment_required": payment_required,
            }
        )
        if max_amount_atomic is not UNSET:
            field_dict["max_amount_atomic"] = max_amount_atomic

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.x402_check_request_payment_required import (
            X402CheckRequestPaymentRequired,
        )

        d = dict(src_dict)
        payment_required = X402CheckRequestPaymentRequired.from_dict(d.pop("payment_required"))

        def _parse_max_amount_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_amount_atomic = _parse_max_amount_atomic(d.pop("max_amount_atomic", UNSET))

        x402_check_request = cls(
            payment_required=payment_required,
            max_amount_atomic=max_amount_atomic,
        )

        x402_check_request.additional_properties = d
        return x402_check_request

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
