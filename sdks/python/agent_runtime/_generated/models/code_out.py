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

from ..models.channel import Channel
from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="CodeOut")


@_dataclass
class CodeOut:
    """A verification code that arrived by SMS or by mail.

    Attributes:
        channel (Channel): How a verification code came: `sms` or `email`.
        message_id (str): The id of the SMS or the mail, as its own routes show it.
        raw_message (str): The SMS text, or the mail's subject.
        received_at (datetime.datetime):
        sender_authenticated (bool): Whether the sender is authenticated: a mail whose receiving side verified DKIM or
            DMARC
            for the domain of `from`, then `authenticated_domain`. An SMS never is. A wait's
            `service_name` matched the message's text; where the sender is authenticated (or is an SMS
            sender id) it also had to be that service's, otherwise it is a hint only.
        authenticated_domain (Union[None, Unset, str]):
        code (Union[None, Unset, str]): The code found; null when the message holds none.
        from_ (Union[None, Unset, str]): The sender: a phone number or an email address.
        request_id (Union[None, Unset, str]):
    """

    channel: Channel
    message_id: str
    raw_message: str
    received_at: datetime.datetime
    sender_authenticated: bool
    authenticated_domain: Union[None, Unset, str] = UNSET
    code: Union[None, Unset, str] = UNSET
    from_: Union[None, Unset, str] = UNSET
    request_id: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        channel = self.channel.value

        message_id = self.message_id

        raw_message = self.raw_message

        received_at = self.received_at.isoformat()

        sender_authenticated = self.sender_authenticated

        authenticated_domain: Union[None, Unset, str]
        if isinstance(self.authenticated_domain, Unset):
            authenticated_domain = UNSET
        else:
            authenticated_domain = self.authenticated_domain

        code: Union[None, Unset, str]
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        from_: Union[None, Unset, str]
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        request_id: Union[None, Unset, str]
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "channel": channel,
                "message_id": message_id,
                "raw_message": raw_message,
                "received_at": received_at,
                "sender_authenticated": sender_authenticated,
            }
        )
        if authenticated_domain is not UNSET:
            field_dict["authenticated_domain"] = authenticated_domain
        if code is not UNSET:
            field_dict["code"] = code
        if from_ is not UNSET:
            field_dict["from"] = from_
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        channel = Channel(d.pop("channel"))

        message_id = d.pop("message_id")

        raw_message = d.pop("raw_message")

        received_at = isoparse(d.pop("received_at"))

        sender_authenticated = d.pop("sender_authenticated")

        def _parse_authenticated_domain(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        authenticated_domain = _parse_authenticated_domain(d.pop("authenticated_domain", UNSET))

        def _parse_code(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        code = _parse_code(d.pop("code", UNSET))

        def _parse_from_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_request_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        code_out = cls(
            channel=channel,
            message_id=message_id,
            raw_message=raw_message,
            received_at=received_at,
            sender_authenticated=sender_authenticated,
            authenticated_domain=authenticated_domain,
            code=code,
            from_=from_,
            request_id=request_id,
        )

        code_out.additional_properties = d
        return code_out

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
