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


T = TypeVar("T", bound="EmailForwardRequest")


@_dataclass
class EmailForwardRequest:
    """`POST /v1/email/forward/{message_id}`: the message goes to these recipients under `Fwd:`, with
    `body_text` above it and its stored attachments, then these, attached.

        Attributes:
            to (list[str]): Recipient addresses; at most 20 over `to`, `cc` and `bcc` together.
            attachments (Union[None, Unset, list['AttachmentIn']]):
            bcc (Union[None, Unset, list[str]]): Addresses copied; at most 20 recipients over `to`, `cc` and `bcc` together.
            body_text (Union[None, Unset, str]): Plain text without NUL, at most 262,144 bytes of UTF-8.
            cc (Union[None, Unset, list[str]]): Addresses copied; at most 20 recipients over `to`, `cc` and `bcc` together.
    """

    to: list[str]
    attachments: Union[None, Unset, list["AttachmentIn"]] = UNSET
    bcc: Union[None, Unset, list[str]] = UNSET
    body_text: Union[None, Unset, str] = UNSET
    cc: Union[None, Unset, list[str]] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
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

        body_text: Union[None, Unset, str]
        if isinstance(self.body_text, Unset):
            body_text = UNSET
        else:
            body_text = self.body_text

        cc: Union[None, Unset, list[str]]
        if isinstance(self.cc, Unset):
            cc = UNSET
        elif isinstance(self.cc, list):
            cc = self.cc

        else:
            cc = self.cc

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "to": to,
            }
        )
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if bcc is not UNSET:
            field_dict["bcc"] = bcc
        if body_text is not UNSET:
            field_dict["body_text"] = body_text
        if cc is not UNSET:
            field_dict["cc"] = cc

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment_in import AttachmentIn

        d = dict(src_dict)
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

        def _parse_body_text(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        body_text = _parse_body_text(d.pop("body_text", UNSET))

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

        email_forward_request = cls(
            to=to,
            attachments=attachments,
            bcc=bcc,
            body_text=body_text,
            cc=cc,
        )

        email_forward_request.additional_properties = d
        return email_forward_request

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
