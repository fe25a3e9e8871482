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
    from ..models.x402_authorize_request_payment_required import (
        X402AuthorizeRequestPaymentRequired,
    )


T = TypeVar("T", bound="X402AuthorizeRequest")


@_dataclass
class X402AuthorizeRequest:
    """An x402 challenge for the wallet to pay.

    Attributes:
        idempotency_key (str): The same key with the same payment terms answers the same intent and authorization.
        payment_required (X402AuthorizeRequestPaymentRequired): The challenge as the server answered it: the `PAYMENT-
            REQUIRED` header's value (base64),
            its decoded object, or a version 1 402 body. At most 64 KiB and 32 `accepts` entries.
        max_amount_atomic (Union[None, Unset, str]): The agent's own ceiling in atomic units: a challenge asking more is
            refused (403, rule
            `max_amount`) before the policy is asked.
        resource_url (Union[None, Unset, str]): The resource paid for, when the challenge names none (at most 2,048
            characters).
    """

    idempotency_key: str
    payment_required: "X402AuthorizeRequestPaymentRequired"
    max_amount_atomic: Union[None, Unset, str] = UNSET
    resource_url: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        idempotency_key = self.idempotency_key

        payment_required = self.payment_required.to_dict()

        max_amount_atomic: Union[None, Unset, str]
        if isinstance(self.max_amount_atomic, Unset):
            max_amount_atomic = UNSET
        else:
            max_amount_atomic = self.max_amount_atomic

        resource_url: Union[None, Unset, str]
        if isinstance(self.resource_url, Unset):
            resource_url = UNSET
        else:
            resource_url = self.resource_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "idempotency_key": idempotency_key,
                "payment_required": payment_required,
            }
        )
        if max_amount_atomic is not UNSET:
            field_dict["max_amount_atomic"] = max_amount_atomic
        if resource_url is not UNSET:
            field_dict["resource_url"] = resource_url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.x402_authorize_request_payment_required import (
            X402AuthorizeRequestPaymentRequired,
        )

        d = dict(src_dict)
        idempotency_key = d.pop("idempotency_key")

        payment_required = X402AuthorizeRequestPaymentRequired.from_dict(d.pop("payment_required"))

        def _parse_max_amount_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_amount_atomic = _parse_max_amount_atomic(d.pop("max_amount_atomic", UNSET))

        def _parse_resource_url(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        resource_url = _parse_resource_url(d.pop("resource_url", UNSET))

        x402_authorize_request = cls(
            idempotency_key=idempotency_key,
            payment_required=payment_required,
            max_amount_atomic=max_amount_atomic,
            resource_url=resource_url,
        )

        x402_authorize_request.additional_properties = d
        return x402_authorize_request

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
