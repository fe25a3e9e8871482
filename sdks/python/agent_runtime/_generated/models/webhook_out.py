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
from uuid import UUID

from ..models.event_type_name import EventTypeName
from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="WebhookOut")


@_dataclass
class WebhookOut:
    """
    Attributes:
        created_at (datetime.datetime):
        enabled (bool):
        id (UUID):
        url (str):
        description (Union[None, Unset, str]):
        disabled_reason (Union[None, Unset, str]):
        secret (Union[None, Unset, str]): `whsec_` and the base64 of 32 random bytes: shown once, when created or
            rotated.
        types (Union[None, Unset, list[EventTypeName]]): `null`: every type.
    """

    created_at: datetime.datetime
    enabled: bool
    id: UUID
    url: str
    description: Union[None, Unset, str] = UNSET
    disabled_reason: Union[None, Unset, str] = UNSET
    secret: Union[None, Unset, str] = UNSET
    types: Union[None, Unset, list[EventTypeName]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        enabled = self.enabled

        id = str(self.id)

        url = self.url

        description: Union[None, Unset, str]
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        disabled_reason: Union[None, Unset, str]
        if isinstance(self.disabled_reason, Unset):
            disabled_reason = UNSET
        else:
            disabled_reason = self.disabled_reason

        secret: Union[None, Unset, str]
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        types: Union[None, Unset, list[str]]
        if isinstance(self.types, Unset):
            types = UNSET
        elif isinstance(self.types, list):
            types = []
            for types_type_0_item_data in self.types:
                types_type_0_item = types_type_0_item_data.value
                types.append(types_type_0_item)

        else:
            types = self.types

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "enabled": enabled,
                "id": id,
                "url": url,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if disabled_reason is not UNSET:
            field_dict["disabled_reason"] = disabled_reason
        if secret is not UNSET:
            field_dict["secret"] = secret
        if types is not UNSET:
            field_dict["types"] = types

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        enabled = d.pop("enabled")

        id = UUID(d.pop("id"))

        url = d.pop("url")

        def _parse_description(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_disabled_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason", UNSET))

        def _parse_secret(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_types(data: object) -> Union[None, Unset, list[EventTypeName]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                types_type_0 = []
                _types_type_0 = data
                for types_type_0_item_data in _types_type_0:
                    types_type_0_item = EventTypeName(types_type_0_item_data)

                    types_type_0.append(types_type_0_item)

                return types_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[EventTypeName]], data)

        types = _parse_types(d.pop("types", UNSET))

        webhook_out = cls(
            created_at=created_at,
            enabled=enabled,
            id=id,
            url=url,
            description=description,
            disabled_reason=disabled_reason,
            secret=secret,
            types=types,
        )

        webhook_out.additional_properties = d
        return webhook_out

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
