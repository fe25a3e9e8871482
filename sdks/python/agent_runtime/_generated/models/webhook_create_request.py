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

T = TypeVar("T", bound="WebhookCreateRequest")


@_dataclass
class WebhookCreateRequest:
    """
    Attributes:
        url (str): `https://` (`http://` only to a private address, where those are allowed), at most 2048
            characters, no credentials, no fragment.
        description (Union[None, Unset, str]):
        types (Union[None, Unset, list[str]]): The event types to deliver; omitted or `null`: every type.
    """

    url: str
    description: Union[None, Unset, str] = UNSET
    types: Union[None, Unset, list[str]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        description: Union[None, Unset, str]
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        types: Union[None, Unset, list[str]]
        if isinstance(self.types, Unset):
            types = UNSET
        elif isinstance(self.types, list):
            types = self.types

        else:
            types = self.types

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "url": url,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if types is not UNSET:
            field_dict["types"] = types

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        def _parse_description(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_types(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                types_type_0 = cast(list[str], data)

                return types_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        types = _parse_types(d.pop("types", UNSET))

        webhook_create_request = cls(
            url=url,
            description=description,
            types=types,
        )

        webhook_create_request.additional_properties = d
        return webhook_create_request

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
