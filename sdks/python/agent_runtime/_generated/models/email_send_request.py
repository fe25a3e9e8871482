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
    from ..models.attachment_in import AttachmentIn
    from ..models.email_send_request_headers_type_0 import EmailSendRequestHeadersType0


T = TypeVar("T", bound="EmailSendRequest")


@_dataclass
class EmailSendRequest:
    """
    Attributes:
        body_text (str): Plain text without NUL, at most 262,144 bytes of UTF-8.
        subject (str): A single line: no CR, LF or NUL.
        to (list[str]): Recipient addresses; at most 20 over `to`, `cc` and `bcc` together.
        attachments (Union[None, Unset, list['AttachmentIn']]):
        bcc (Union[None, Unset, list[str]]): Addresses copied; at most 20 recipients over `to`, `cc` and `bcc` together.
        body_html (Union[None, Unset, str]): Unavailable: a request that sets it is refused (400).
        category (Union[None, Unset, str]): Only `transactional` (the default) is supported.
        cc (Union[None, Unset, list[str]]): Addresses copied; at most 20 recipients over `to`, `cc` and `bcc` together.
        headers (Union['EmailSendRequestHeadersType0', None, Unset]): Custom headers, at most 50 holding at most 16384
            bytes of names and values: names of printable ASCII without `:` or spaces, values without control characters but
            the tab. Headers the service, the provider or receiving servers write (From, To, Subject, Message-ID, Content-*,
            *-Signature, ARC-*, Resent-*, Received, Authentication-Results...) are refused.
        reply_to (Union[None, Unset, list[str]]): Accepted by the schema but unavailable: a request that sets it is
            refused (400).
    """

    body_text: str
    subject: str
    to: list[str]
    attachments: Union[None, Unset, list["AttachmentIn"]] = UNSET
    bcc: Union[None, Unset, list[str]] = UNSET
    body_html: Union[None, Unset, str] = UNSET
    category: Union[None, Unset, str] = UNSET
    cc: Union[None, Unset, list[str]] = UNSET
    headers: Union["EmailSendRequestHeadersType0", None, Unset] = UNSET
    reply_to: Union[None, Unset, list[str]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.email_send_request_headers_type_0 import (
            EmailSendRequestHeadersType0,
        )

        body_text = self.body_text

        subject = self.subject

        to = self.to

        attachments: Union[None, Unset, list[dict[str, Any]]]
        if isinstance(self.attachments, Unset):
            attachments = UNSET
        elif isinstance(self.attachments, list):
            attachments = []
            for attachments_type_0_item_data in self.attachments:
                attachments_type_0_item = attachments_type_0_item_data.to_dict()
                attachments.append(attachments_type_0_item)

        else:
            attachments = self.attachments

        bcc: Union[None, Unset, list[str]]
        if isinstance(self.bcc, Unset):
            bcc = UNSET
        elif isinstance(self.bcc, list):
            bcc = self.bcc

        else:
            bcc = self.bcc

        body_html: Union[None, Unset, str]
        if isinstance(self.body_html, Unset):
            body_html = UNSET
        else:
            body_html = self.body_html

        category: Union[None, Unset, str]
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        cc: Union[None, Unset, list[str]]
        if isinstance(self.cc, Unset):
            cc = UNSET
        elif isinstance(self.cc, list):
            cc = self.cc

        else:
            cc = self.cc

        headers: Union[None, Unset, dict[str, Any]]
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, EmailSendRequestHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        reply_to: Union[None, Unset, list[str]]
        if isinstance(self.reply_to, Unset):
            reply_to = UNSET
        elif isinstance(self.reply_to, list):
            reply_to = self.reply_to

        else:
            reply_to = self.reply_to

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "body_text": body_text,
                "subject": subject,
                "to": to,
            }
        )
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if bcc is not UNSET:
            field_dict["bcc"] = bcc
        if body_html is not UNSET:
            field_dict["body_html"] = body_html
        if category is not UNSET:
            field_dict["category"] = category
        if cc is not UNSET:
            field_dict["cc"] = cc
        if headers is not UNSET:
            field_dict["headers"] = headers
        if reply_to is not UNSET:
            field_dict["reply_to"] = reply_to

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment_in import AttachmentIn
        from ..models.email_send_request_headers_type_0 import (
            EmailSendRequestHeadersType0,
        )

        d = dict(src_dict)
        body_text = d.pop("body_text")

        subject = d.pop("subject")

        to = cast(list[str], d.pop("to"))

        def _parse_attachments(data: object) -> Union[None, Unset, list["AttachmentIn"]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                attachments_type_0 = []
                _attachments_type_0 = data
                for attachments_type_0_item_data in _attachments_type_0:
                    attachments_type_0_item = AttachmentIn.from_dict(attachments_type_0_item_data)

                    attachments_type_0.append(attachments_type_0_item)

                return attachments_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list["AttachmentIn"]], data)

        attachments = _parse_attachments(d.pop("attachments", UNSET))

        def _parse_bcc(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                bcc_type_0 = cast(list[str], data)

                return bcc_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        bcc = _parse_bcc(d.pop("bcc", UNSET))

        def _parse_body_html(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        body_html = _parse_body_html(d.pop("body_html", UNSET))

        def _parse_category(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_cc(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                cc_type_0 = cast(list[str], data)

                return cc_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        cc = _parse_cc(d.pop("cc", UNSET))

        def _parse_headers(data: object) -> Union["EmailSendRequestHeadersType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = EmailSendRequestHeadersType0.from_dict(data)

                return headers_type_0
            except:  # noqa: E722
                pass
            return cast(Union["EmailSendRequestHeadersType0", None, Unset], data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_reply_to(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                reply_to_type_0 = cast(list[str], data)

                return reply_to_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        reply_to = _parse_reply_to(d.pop("reply_to", UNSET))

        email_send_request = cls(
            body_text=body_text,
            subject=subject,
            to=to,
            attachments=attachments,
            bcc=bcc,
            body_html=body_html,
            category=category,
            cc=cc,
            headers=headers,
            reply_to=reply_to,
        )

        email_send_request.additional_properties = d
        return email_send_request

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
