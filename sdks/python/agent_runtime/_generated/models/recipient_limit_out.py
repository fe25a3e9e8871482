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

T = TypeVar("T", bound="RecipientLimitOut")


@_dataclass
class RecipientLimitOut:
    """The caps of one counterparty.

    Attributes:
        address (str): EIP-55 checksummed.
        max_daily_atomic (Union[None, Unset, str]): Over a rolling 24 hours, counted like the daily cap. Integer in
            atomic units; `null` when
            not configured.
        max_per_tx_atomic (Union[None, Unset, str]): Integer in atomic units; `null` when not configured.
    """

    address: str
    max_daily_atomic: Union[None, Unset, str] = UNSET
    max_per_tx_atomic: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        max_daily_atomic: Union[None, Unset, str]
        if isinstance(self.max_daily_atomic, Unset):
            max_daily_atomic = UNSET
        else:
            max_daily_atomic = self.max_daily_atomic

        max_per_tx_atomic: Union[None, Unset, str]
        if isinstance(self.max_per_tx_atomic, Unset):
            max_per_tx_atomic = UNSET
        else:
            max_per_tx_atomic = self.max_per_tx_atomic

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "address": address,
            }
        )
        if max_daily_atomic is not UNSET:
            field_dict["max_daily_atomic"] = max_daily_atomic
        if max_per_tx_atomic is not UNSET:
            field_dict["max_per_tx_atomic"] = max_per_tx_atomic

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        address = d.pop("address")

        def _parse_max_daily_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_daily_atomic = _parse_max_daily_atomic(d.pop("max_daily_atomic", UNSET))

        def _parse_max_per_tx_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_per_tx_atomic = _parse_max_per_tx_atomic(d.pop("max_per_tx_atomic", UNSET))

        recipient_limit_out = cls(
            address=address,
            max_daily_atomic=max_daily_atomic,
            max_per_tx_atomic=max_per_tx_atomic,
        )

        recipient_limit_out.additional_properties = d
        return recipient_limit_out

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
