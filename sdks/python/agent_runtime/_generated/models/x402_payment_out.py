import datetime
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

from ..types import UNSET, Unset, isoparse

if TYPE_CHECKING:
    from ..models.x402_payment_out_payment_response_type_0 import (
        X402PaymentOutPaymentResponseType0,
    )


T = TypeVar("T", bound="X402PaymentOut")


@_dataclass
class X402PaymentOut:
    """An x402 payment's resource and authorization.

    Attributes:
        network (str): As the challenge named it: `eip155:<chain id>`, or version 1's `base` or `base-sepolia`.
        nonce (Union[None, Unset, str]): The authorization's nonce, `0x` and 64 hex digits; `null` until it is signed.
        payment_response (Union['X402PaymentOutPaymentResponseType0', None, Unset]): The server's decoded `PAYMENT-
            RESPONSE`, when a fetch made here received one.
        resource_url (Union[None, Unset, str]):
        valid_before (Union[None, Unset, datetime.datetime]): Until when the payee may settle it; `null` until it is
            signed.
    """

    network: str
    nonce: Union[None, Unset, str] = UNSET
    payment_response: Union["X402PaymentOutPaymentResponseType0", None, Unset] = UNSET
    resource_url: Union[None, Unset, str] = UNSET
    valid_before: Union[None, Unset, datetime.datetime] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.x402_payment_out_payment_response_type_0 import (
            X402PaymentOutPaymentResponseType0,
        )

        network = self.network

        nonce: Union[None, Unset, str]
        if isinstance(self.nonce, Unset):
            nonce = UNSET
        else:
            nonce = self.nonce

        payment_response: Union[None, Unset, dict[str, Any]]
        if isinstance(self.payment_response, Unset):
            payment_response = UNSET
        elif isinstance(self.payment_response, X402PaymentOutPaymentResponseType0):
            payment_response = self.payment_response.to_dict()
        else:
            payment_response = self.payment_response

        resource_url: Union[None, Unset, str]
        if isinstance(self.resource_url, Unset):
            resource_url = UNSET
        else:
            resource_url = self.resource_url

        valid_before: Union[None, Unset, str]
        if isinstance(self.valid_before, Unset):
            valid_before = UNSET
        elif isinstance(self.valid_before, datetime.datetime):
            valid_before = self.valid_before.isoformat()
        else:
            valid_before = self.valid_before

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "network": network,
            }
        )
        if nonce is not UNSET:
            field_dict["nonce"] = nonce
        if payment_response is not UNSET:
            field_dict["payment_response"] = payment_response
        if resource_url is not UNSET:
            field_dict["resource_url"] = resource_url
        if valid_before is not UNSET:
            field_dict["valid_before"] = valid_before

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.x402_payment_out_payment_response_type_0 import (
            X402PaymentOutPaymentResponseType0,
        )

        d = dict(src_dict)
        network = d.pop("network")

        def _parse_nonce(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        nonce = _parse_nonce(d.pop("nonce", UNSET))

        def _parse_payment_response(data: object) -> Union["X402PaymentOutPaymentResponseType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payment_response_type_0 = X402PaymentOutPaymentResponseType0.from_dict(data)

                return payment_response_type_0
            except:  # noqa: E722
                pass
            return cast(Union["X402PaymentOutPaymentResponseType0", None, Unset], data)

        payment_response = _parse_payment_response(d.pop("payment_response", UNSET))

        def _parse_resource_url(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        resource_url = _parse_resource_url(d.pop("resource_url", UNSET))

        def _parse_valid_before(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                valid_before_type_0 = isoparse(data)

                return valid_before_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        valid_before = _parse_valid_before(d.pop("valid_before", UNSET))

        x402_payment_out = cls(
            network=network,
            nonce=nonce,
            payment_response=payment_response,
            resource_url=resource_url,
            valid_before=valid_before,
        )

        x402_payment_out.additional_properties = d
        return x402_payment_out

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
