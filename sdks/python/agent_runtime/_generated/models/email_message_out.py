import datetime
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

from ..models.direction import Direction
from ..models.email_status import EmailStatus
from ..types import UNSET, Unset, isoparse

if TYPE_CHECKING:
    from ..models.attachment_out import AttachmentOut
    from ..models.email_message_out_headers import EmailMessageOutHeaders
    from ..models.parsed_data_out import ParsedDataOut


T = TypeVar("T", bound="EmailMessageOut")


@_dataclass
class EmailMessageOut:
    """A message of the inbox, inbound or outbound.

    Attributes:
        attachments (list['AttachmentOut']): Each attachment; one `stored` downloads from
            `/v1/email/messages/{message_id}/attachments/{id}`.
        bcc (list[str]):
        cc (list[str]):
        created_at (datetime.datetime):
        direction (Direction): Which way a message went: `inbound` (to the agent) or `outbound` (from it).
        headers (EmailMessageOutHeaders): Header names and values; the values of a repeated header are joined by a line
            break.
        id (str):
        parsed_data (ParsedDataOut): What the service read out of the message.
        reply_to (list[str]):
        status (EmailStatus): Where a mail stands: `queued` (accepted, waiting for the provider), `sent` (the provider
            took
            it), `failed` (the provider refused it), or `received` (inbound).
        thread_id (str): Messages of one conversation share it; a reply has the thread of the message it answers.
        to (list[str]):
        failure_reason (Union[None, Unset, str]): Why the provider refused an outbound message for good; null otherwise.
        from_ (Union[None, Unset, str]): The sender's address.
        html (Union[None, Unset, str]): The HTML body of inbound mail, cut like `text` in inbox pages.
        internet_message_id (Union[None, Unset, str]): The RFC 5322 Message-ID, with its angle brackets.
        provider_message_id (Union[None, Unset, str]):
        received_at (Union[None, Unset, datetime.datetime]): Null for outbound.
        sent_at (Union[None, Unset, datetime.datetime]): When the message was accepted for sending; null for inbound.
        subject (Union[None, Unset, str]):
        text (Union[None, Unset, str]): The plain-text body. Inbox pages carry its first 4,096 characters; a message
            read, all.
    """

    attachments: list["AttachmentOut"]
    bcc: list[str]
    cc: list[str]
    created_at: datetime.datetime
    direction: Direction
    headers: "EmailMessageOutHeaders"
    id: str
    parsed_data: "ParsedDataOut"
    reply_to: list[str]
    status: EmailStatus
    thread_id: str
    to: list[str]
    failure_reason: Union[None, Unset, str] = UNSET
    from_: Union[None, Unset, str] = UNSET
    html: Union[None, Unset, str] = UNSET
    internet_message_id: Union[None, Unset, str] = UNSET
    provider_message_id: Union[None, Unset, str] = UNSET
    received_at: Union[None, Unset, datetime.datetime] = UNSET
    sent_at: Union[None, Unset, datetime.datetime] = UNSET
    subject: Union[None, Unset, str] = UNSET
    text: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attachments = []
        for attachments_item_data in self.attachments:
            attachments_item = attachments_item_data.to_dict()
            attachments.append(attachments_item)

        bcc = self.bcc

        cc = self.cc

        created_at = self.created_at.isoformat()

        direction = self.direction.value

        headers = self.headers.to_dict()

        id = self.id

        parsed_data = self.parsed_data.to_dict()

        reply_to = self.reply_to

        status = self.status.value

        thread_id = self.thread_id

        to = self.to

        failure_reason: Union[None, Unset, str]
        if isinstance(self.failure_reason, Unset):
            failure_reason = UNSET
        else:
            failure_reason = self.failure_reason

        from_: Union[None, Unset, str]
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        html: Union[None, Unset, str]
        if isinstance(self.html, Unset):
            html = UNSET
        else:
            html = self.html

        internet_message_id: Union[None, Unset, str]
        if isinstance(self.internet_message_id, Unset):
            internet_message_id = UNSET
        else:
            internet_message_id = self.internet_message_id

        provider_message_id: Union[None, Unset, str]
        if isinstance(self.provider_message_id, Unset):
            provider_message_id = UNSET
        else:
            provider_message_id = self.provider_message_id

        received_at: Union[None, Unset, str]
        if isinstance(self.received_at, Unset):
            received_at = UNSET
        elif isinstance(self.received_at, datetime.datetime):
            received_at = self.received_at.isoformat()
        else:
            received_at = self.received_at

        sent_at: Union[None, Unset, str]
        if isinstance(self.sent_at, Unset):
            sent_at = UNSET
        elif isinstance(self.sent_at, datetime.datetime):
            sent_at = self.sent_at.isoformat()
        else:
            sent_at = self.sent_at

        subject: Union[None, Unset, str]
        if isinstance(self.subject, Unset):
            subject = UNSET
        else:
            subject = self.subject

        text: Union[None, Unset, str]
        if isinstance(self.text, Unset):
            text = UNSET
        else:
            text = self.text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attachments": attachments,
                "bcc": bcc,
                "cc": cc,
                "created_at": created_at,
                "direction": direction,
                "headers": headers,
                "id": id,
                "parsed_data": parsed_data,
                "reply_to": reply_to,
                "status": status,
                "thread_id": thread_id,
                "to": to,
            }
        )
        if failure_reason is not UNSET:
            field_dict["failure_reason"] = failure_reason
        if from_ is not UNSET:
            field_dict["from"] = from_
        if html is not UNSET:
            field_dict["html"] = html
        if internet_message_id is not UNSET:
            field_dict["internet_message_id"] = internet_message_id
        if provider_message_id is not UNSET:
            field_dict["provider_message_id"] = provider_message_id
        if received_at is not UNSET:
            field_dict["received_at"] = received_at
        if sent_at is not UNSET:
            field_dict["sent_at"] = sent_at
        if subject is not UNSET:
            field_dict["subject"] = subject
        if text is not UNSET:
            field_dict["text"] = text

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment_out import AttachmentOut
        from ..models.email_message_out_headers import EmailMessageOutHeaders
        from ..models.parsed_data_out import ParsedDataOut

        d = dict(src_dict)
        attachments = []
        _attachments = d.pop("attachments")
        for attachments_item_data in _attachments:
            attachments_item = AttachmentOut.from_dict(attachments_item_data)

            attachments.append(attachments_item)

        bcc = cast(list[str], d.pop("bcc"))

        cc = cast(list[str], d.pop("cc"))

        created_at = isoparse(d.pop("created_at"))

        direction = Direction(d.pop("direction"))

        headers = EmailMessageOutHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        parsed_data = ParsedDataOut.from_dict(d.pop("parsed_data"))

        reply_to = cast(list[str], d.pop("reply_to"))

        status = EmailStatus(d.pop("status"))

        thread_id = d.pop("thread_id")

        to = cast(list[str], d.pop("to"))

        def _parse_failure_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        failure_reason = _parse_failure_reason(d.pop("failure_reason", UNSET))

        def _parse_from_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_html(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        html = _parse_html(d.pop("html", UNSET))

        def _parse_internet_message_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        internet_message_id = _parse_internet_message_id(d.pop("internet_message_id", UNSET))

        def _parse_provider_message_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        provider_message_id = _parse_provider_message_id(d.pop("provider_message_id", UNSET))

        def _parse_received_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                received_at_type_0 = isoparse(data)

                return received_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        received_at = _parse_received_at(d.pop("received_at", UNSET))

        def _parse_sent_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                sent_at_type_0 = isoparse(data)

                return sent_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        sent_at = _parse_sent_at(d.pop("sent_at", UNSET))

        def _parse_subject(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        subject = _parse_subject(d.pop("subject", UNSET))

        def _parse_text(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        text = _parse_text(d.pop("text", UNSET))

        email_message_out = cls(
            attachments=attachments,
            bcc=bcc,
            cc=cc,
            created_at=created_at,
            direction=direction,
            headers=headers,
            id=id,
            parsed_data=parsed_data,
            reply_to=reply_to,
            status=status,
            thread_id=thread_id,
            to=to,
            failure_reason=failure_reason,
            from_=from_,
            html=html,
            internet_message_id=internet_message_id,
            provider_message_id=provider_message_id,
            received_at=received_at,
            sent_at=sent_at,
            subject=subject,
            text=text,
        )

        email_message_out.additional_properties = d
        return email_message_out

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
