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

T = TypeVar("T", bound="PhoneNumberResponse")


@_dataclass
class PhoneNumberResponse:
    """
    Attributes:
        number (str): E.164.
        provider (str):
        country_iso2 (Union[None, Unset, str]):
    """

    number: str
    provider: str
    country_iso2: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        number = self.number

        provider = self.provider

        country_iso2: Union[None, Unset, str]
        if isinstance(self.country_iso2, Unset):
            country_iso2 = UNSET
        else:
            country_iso2 = self.country_iso2

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "number": number,
                "provider": provider,
            }
        )
        if country_iso2 is not UNSET:
            field_dict["country_iso2"] = country_iso2

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        number = d.pop("number")

        provider = d.pop("provider")

        def _parse_country_iso2(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        country_iso2 = _parse_country_iso2(d.pop("country_iso2", UNSET))

        phone_number_response = cls(
            number=number,
            provider=provider,
            country_iso2=country_iso2,
        )

        phone_number_response.additional_properties = d
        return phone_number_response

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
