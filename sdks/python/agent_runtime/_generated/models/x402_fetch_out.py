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

from ..models.x402_fetch_status import X402FetchStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.fetched_response_out import FetchedResponseOut
    from ..models.x402_fetch_payment_out import X402FetchPaymentOut


T = TypeVar("T", bound="X402FetchOut")


@_dataclass
class X402FetchOut:
    """A fetched resource, and its payment when it asked for one.

    Attributes:
        response (FetchedResponseOut): The resource's answer: its status, the headers shown (`content-type`, `content-
            length`,
            `payment-response`, `etag`, `cache-control`) and its body, as text or, when not UTF-8, in
            `body_base64`.
        status (X402FetchStatus): Whether the resource had to be paid.
        payment (Union['X402FetchPaymentOut', None, Unset]):
    """

    response: "FetchedResponseOut"
    status: X402FetchStatus
    payment: Union["X402FetchPaymentOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.x402_fetch_payment_out import X402FetchPaymentOut

        response = self.response.to_dict()

        status = self.status.value

        payment: Union[None, Unset, dict[str, Any]]
        if isinstance(self.payment, Unset):
            payment = UNSET
        elif isinstance(self.payment, X402FetchPaymentOut):
            payment = self.payment.to_dict()
        else:
            payment = self.payment

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "response": response,
                "status": status,
            }
        )
        if payment is not UNSET:
            field_dict["payment"] = payment

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fetched_response_out import FetchedResponseOut
        from ..models.x402_fetch_payment_out import X402FetchPaymentOut

        d = dict(src_dict)
        response = FetchedResponseOut.from_dict(d.pop("response"))

        status = X402FetchStatus(d.pop("status"))

        def _parse_payment(data: object) -> Union["X402FetchPaymentOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payment_type_1 = X402FetchPaymentOut.from_dict(data)

                return payment_type_1
            except:  # noqa: E722
                pass
            return cast(Union["X402FetchPaymentOut", None, Unset], data)

        payment = _parse_payment(d.pop("payment", UNSET))

        x402_fetch_out = cls(
            response=response,
            status=status,
            payment=payment,
        )

        x402_fetch_out.additional_properties = d
        return x402_fetch_out

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
