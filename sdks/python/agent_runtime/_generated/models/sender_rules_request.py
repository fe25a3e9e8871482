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

T = TypeVar("T", bound="SenderRulesRequest")


@_dataclass
class SenderRulesRequest:
    """`PUT /v1/email/rules`: both lists replace the stored ones (a list left out is emptied).

    Attributes:
        allow (Union[Unset, list[str]]): Addresses, or `@` and a domain; at most 1,000.
        block (Union[Unset, list[str]]): Addresses, or `@` and a domain; at most 1,000.
    """

    allow: Union[Unset, list[str]] = UNSET
    block: Union[Unset, list[str]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allow: Union[Unset, list[str]] = UNSET
        if not isinstance(self.allow, Unset):
            allow = self.allow

        block: Union[Unset, list[str]] = UNSET
        if not isinstance(self.block, Unset):
            block = self.block

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if allow is not UNSET:
            field_dict["allow"] = allow
        if block is not UNSET:
            field_dict["block"] = block

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow = cast(list[str], d.pop("allow", UNSET))

        block = cast(list[str], d.pop("block", UNSET))

        sender_rules_request = cls(
            allow=allow,
            block=block,
        )

        sender_rules_request.additional_properties = d
        return sender_rules_request

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
