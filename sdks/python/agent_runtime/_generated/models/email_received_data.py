from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)
from uuid import UUID

from ..types import UNSET, Unset

T = TypeVar("T", bound="EmailReceivedData")


@_dataclass
class EmailReceivedData:
    """
    Attributes:
        attachment_count (int): How many attachments the mail has; the message (`/v1/email/messages/{message_id}`)
            names each, with the id to download it by.
        message_id (UUID):
        thread_id (UUID):
        verification_codes (list[str]): The most likely first; at most 10.
        from_ (Union[None, Unset, str]):
        subject (Union[None, Unset, str]):
    """

    attachment_count: int
    message_id: UUID
    thread_id: UUID
    verification_codes: list[str]
    from_: Union[None, Unset, str] = UNSET
    subject: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        attachment_count = self.attachment_count

        message_id = str(self.message_id)

        thread_id = str(self.thread_id)

        verification_codes = self.verification_codes

        from_: Union[None, Unset, str]
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        subject: Union[None, Unset, str]
        if isinstance(self.subject, Unset):
            subject = UNSET
        else:
            subject = self.subject

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attachment_count": attachment_count,
                "message_id": message_id,
                "thread_id": thread_id,
                "verification_codes": verification_codes,
            }
        )
        if from_ is not UNSET:
            field_dict["from"] = from_
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attachment_count = d.pop("attachment_count")

        message_id = UUID(d.pop("message_id"))

        thread_id = UUID(d.pop("thread_id"))

        verification_codes = cast(list[str], d.pop("verification_codes"))

        def _parse_from_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_subject(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        subject = _parse_subject(d.pop("subject", UNSET))

        email_received_data = cls(
            attachment_count=attachment_count,
            message_id=message_id,
            thread_id=thread_id,
            verification_codes=verification_codes,
            from_=from_,
            subject=subject,
        )

        return email_received_data
