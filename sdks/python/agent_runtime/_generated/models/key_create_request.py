from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from ..models.scope_name import ScopeName
from ..types import UNSET, Unset

T = TypeVar("T", bound="KeyCreateRequest")


@_dataclass
class KeyCreateRequest:
    """
    Attributes:
        scopes (list[ScopeName]): The scopes of the new key, each held by the key that makes it; `agent:read` is always
            added. Example: ['email:read'].
        expires_in_seconds (Union[Unset, Any]): Seconds until the key expires; omitted: when the key that makes it
            expires, else never.
        label (Union[None, Unset, str]): What the key is for, for the people who read the list: 1 to 200 characters.
    """

    scopes: list[ScopeName]
    expires_in_seconds: Union[Unset, Any] = UNSET
    label: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        scopes = []
        for scopes_item_data in self.scopes:
            scopes_item = scopes_item_data.value
            scopes.append(scopes_item)

        expires_in_seconds = self.expires_in_seconds

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "scopes": scopes,
            }
        )
        if expires_in_seconds is not UNSET:
            field_dict["expires_in_seconds"] = expires_in_seconds
        if label is not UNSET:
            field_dict["label"] = label

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        scopes = []
        _scopes = d.pop("scopes")
        for scopes_item_data in _scopes:
            scopes_item = ScopeName(scopes_item_data)

            scopes.append(scopes_item)

        expires_in_seconds = d.pop("expires_in_seconds", UNSET)

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        key_create_request = cls(
            scopes=scopes,
            expires_in_seconds=expires_in_seconds,
            label=label,
        )

        key_create_request.additional_properties = d
        return key_create_request

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
