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

from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="ThreadOut")


@_dataclass
class ThreadOut:
    """A conversation of the inbox, as a page of threads shows it.

    Attributes:
        last_message_at (datetime.datetime):
        message_count (int):
        participants (list[str]): The addresses of its messages' From, To and Cc, lowercased, each once (the first 50).
        thread_id (str): The `thread_id` its messages share.
        last_message_preview (Union[None, Unset, str]): The first 200 characters of its newest message's text.
        subject (Union[None, Unset, str]): The subject of its first message.
    """

    last_message_at: datetime.datetime
    message_count: int
    participants: list[str]
    thread_id: str
    last_message_preview: Union[None, Unset, str] = UNSET
    subject: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        last_message_at = self.last_message_at.isoformat()

        message_count = self.message_count

        participants = self.participants

        thread_id = self.thread_id

        last_message_preview: Union[None, Unset, str]
        if isinstance(self.last_message_preview, Unset):
            last_message_preview = UNSET
        else:
            last_message_preview = self.last_message_preview

        subject: Union[None, Unset, str]
        if isinstance(self.subject, Unset):
            subject = UNSET
        else:
            subject = self.subject

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "last_message_at": last_message_at,
                "message_count": message_count,
                "participants": participants,
                "thread_id": thread_id,
            }
        )
        if last_message_preview is not UNSET:
            field_dict["last_message_preview"] = last_message_preview
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        last_message_at = isoparse(d.pop("last_message_at"))

        message_count = d.pop("message_count")

        participants = cast(list[str], d.pop("participants"))

        thread_id = d.pop("thread_id")

        def _parse_last_message_preview(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        last_message_preview = _parse_last_message_preview(d.pop("last_message_preview", UNSET))

        def _parse_subject(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        subject = _parse_subject(d.pop("subject", UNSET))

        thread_out = cls(
            last_message_at=last_message_at,
            message_count=message_count,
            participants=participants,
            thread_id=thread_id,
            last_message_preview=last_message_preview,
            subject=subject,
        )

        thread_out.additional_properties = d
        return thread_out

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
