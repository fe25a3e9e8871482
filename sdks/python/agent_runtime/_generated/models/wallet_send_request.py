from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset

T = TypeVar("T", bound="WalletSendRequest")


@_dataclass
class WalletSendRequest:
    """
    Attributes:
        amount_atomic (str): Integer in atomic units, greater than zero, at most 2^128 - 1.
        to (str): Recipient address: 0x and 40 hex digits, all lower-case, all upper-case, or mixed case
            passing the EIP-55 checksum.
        asset (Union[Unset, str]):  Default: 'USDC'.
        chain (Union[Unset, str]):  Default: 'base'.
        idempotency_key (Union[None, Unset, str]): Client-chosen, 1 to 255 characters without control characters; kept
            for 24 hours. A reuse
            with other parameters returns 409.
    """

    amount_atomic: str
    to: str
    asset: Union[Unset, str] = "USDC"
    chain: Union[Unset, str] = "base"
    idempotency_key: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount_atomic = self.amount_atomic

        to = self.to

        asset = self.asset

        chain = self.chain

        idempotency_key: Union[None, Unset, str]
        if isinstance(self.idempotency_key, Unset):
            idempotency_key = UNSET
        else:
            idempotency_key = self.idempotency_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount_atomic": amount_atomic,
                "to": to,
            }
        )
        if asset is not UNSET:
            field_dict["asset"] = asset
        if chain is not UNSET:
            field_dict["chain"] = chain
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        amount_atomic = d.pop("amount_atomic")

        to = d.pop("to")

        asset = d.pop("asset", UNSET)

        chain = d.pop("chain", UNSET)

        def _parse_idempotency_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key", UNSET))

        wallet_send_request = cls(
            amount_atomic=amount_atomic,
            to=to,
            asset=asset,
            chain=chain,
            idempotency_key=idempotency_key,
        )

        wallet_send_request.additional_properties = d
        return wallet_send_request

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
