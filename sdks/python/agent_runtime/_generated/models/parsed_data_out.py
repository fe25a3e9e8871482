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

T = TypeVar("T", bound="ParsedDataOut")


@_dataclass
class ParsedDataOut:
    """What the service read out of the message.

    Attributes:
        authenticated_domain (Union[None, Unset, str]): The domain authenticated, when one was.
        sender_authenticated (Union[None, Unset, bool]): Inbound mail: whether the receiving side verified DKIM or DMARC
            for the domain of `from`
            (`Authentication-Results` it wrote); false when it reported nothing or a failure.
        verification_codes (Union[None, Unset, list[str]]): Verification codes in the subject or text of inbound mail,
            most likely first.
    """

    authenticated_domain: Union[None, Unset, str] = UNSET
    sender_authenticated: Union[None, Unset, bool] = UNSET
    verification_codes: Union[None, Unset, list[str]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        authenticated_domain: Union[None, Unset, str]
        if isinstance(self.authenticated_domain, Unset):
            authenticated_domain = UNSET
        else:
            authenticated_domain = self.authenticated_domain

        sender_authenticated: Union[None, Unset, bool]
        if isinstance(self.sender_authenticated, Unset):
            sender_authenticated = UNSET
        else:
            sender_authenticated = self.sender_authenticated

        verification_codes: Union[None, Unset, list[str]]
        if isinstance(self.verification_codes, Unset):
            verification_codes = UNSET
        elif isinstance(self.verification_codes, list):
            verification_codes = self.verification_codes

        else:
            verification_codes = self.verification_codes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if authenticated_domain is not UNSET:
            field_dict["authenticated_domain"] = authenticated_domain
        if sender_authenticated is not UNSET:
            field_dict["sender_authenticated"] = sender_authenticated
        if verification_codes is not UNSET:
            field_dict["verification_codes"] = verification_codes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_authenticated_domain(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        authenticated_domain = _parse_authenticated_domain(d.pop("authenticated_domain", UNSET))

        def _parse_sender_authenticated(data: object) -> Union[None, Unset, bool]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, bool], data)

        sender_authenticated = _parse_sender_authenticated(d.pop("sender_authenticated", UNSET))

        def _parse_verification_codes(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                verification_codes_type_0 = cast(list[str], data)

                return verification_codes_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        verification_codes = _parse_verification_codes(d.pop("verification_codes", UNSET))

        parsed_data_out = cls(
            authenticated_domain=authenticated_domain,
            sender_authenticated=sender_authenticated,
            verification_codes=verification_codes,
        )

        parsed_data_out.additional_properties = d
        return parsed_data_out

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
