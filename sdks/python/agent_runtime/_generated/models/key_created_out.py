import datetime
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
from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="KeyCreatedOut")


@_dataclass
class KeyCreatedOut:
    """A key just made: the key itself is shown this once.

    Attributes:
        id (str):
        key (str): The new key (`ark_` and 43 characters): store it now, it is never shown again.
        scopes (list[ScopeName]):
        expires_at (Union[None, Unset, datetime.datetime]):
        label (Union[None, Unset, str]):
    """

    id: str
    key: str
    scopes: list[ScopeName]
    expires_at: Union[None, Unset, datetime.datetime] = UNSET
    label: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        key = self.key

        scopes = []
        for scopes_item_data in self.scopes:
            scopes_item = scopes_item_data.value
            scopes.append(scopes_item)

        expires_at: Union[None, Unset, str]
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "key": key,
                "scopes": scopes,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if label is not UNSET:
            field_dict["label"] = label

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        scopes = []
        _scopes = d.pop("scopes")
        for scopes_item_data in _scopes:
            scopes_item = ScopeName(scopes_item_data)

            scopes.append(scopes_item)

        def _parse_expires_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = isoparse(data)

                return expires_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        key_created_out = cls(
            id=id,
            key=key,
            scopes=scopes,
            expires_at=expires_at,
            label=label,
        )

        key_created_out.additional_properties = d
        return key_created_out

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
