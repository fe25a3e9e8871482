from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.email_message_out import EmailMessageOut


T = TypeVar("T", bound="ThreadDetailOut")


@_dataclass
class ThreadDetailOut:
    """A thread read whole: its subject and participants as a page of threads gives them, and its
    messages oldest first, with full bodies.

        Attributes:
            earlier_messages_omitted (int): How many earlier messages of a thread of more than 100 are not in `messages`; 0
                otherwise.
            messages (list['EmailMessageOut']): Its newest 100 messages at most, oldest first.
            participants (list[str]): The addresses of its messages' From, To and Cc, lowercased, each once (the first 50).
            thread_id (str):
            subject (Union[None, Unset, str]): The subject of its first message (also when that message is among those
                omitted).
    """

    earlier_messages_omitted: int
    messages: list["EmailMessageOut"]
    participants: list[str]
    thread_id: str
    subject: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        earlier_messages_omitted = self.earlier_messages_omitted

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        participants = self.participants

        thread_id = self.thread_id

        subject: Union[None, Unset, str]
        if isinstance(self.subject, Unset):
            subject = UNSET
        else:
            subject = self.subject

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "earlier_messages_omitted": earlier_messages_omitted,
                "messages": messages,
                "participants": participants,
                "thread_id": thread_id,
            }
        )
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.email_message_out import EmailMessageOut

        d = dict(src_dict)
        earlier_messages_omitted = d.pop("earlier_messages_omitted")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = EmailMessageOut.from_dict(messages_item_data)

            messages.append(messages_item)

        participants = cast(list[str], d.pop("participants"))

        thread_id = d.pop("thread_id")

        def _parse_subject(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        subject = _parse_subject(d.pop("subject", UNSET))

        thread_detail_out = cls(
            earlier_messages_omitted=earlier_messages_omitted,
            messages=messages,
            participants=participants,
            thread_id=thread_id,
            subject=subject,
        )

        thread_detail_out.additional_properties = d
        return thread_detail_out

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
