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

T = TypeVar("T", bound="AttachmentIn")


@_dataclass
class AttachmentIn:
    """An attachment to send: at most 10 with one message, 10 MiB decoded in all.

    Attributes:
        content_base64 (str): The bytes in base64 (RFC 4648, standard alphabet; padding and line breaks optional).
        filename (str): The name it is sent under: no control characters or marks that reorder text.
        content_type (Union[None, Unset, str]): A media type, `type/subtype` with optional parameters; when left out,
            the type the
            filename's extension stands for (`note.txt` is `text/plain`), else
            `application/octet-stream`.
    """

    content_base64: str
    filename: str
    content_type: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        content_base64 = self.content_base64

        filename = self.filename

        content_type: Union[None, Unset, str]
        if isinstance(self.content_type, Unset):
            content_type = UNSET
        else:
            content_type = self.content_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "content_base64": content_base64,
                "filename": filename,
            }
        )
        if content_type is not UNSET:
            field_dict["content_type"] = content_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        content_base64 = d.pop("content_base64")

        filename = d.pop("filename")

        def _parse_content_type(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        content_type = _parse_content_type(d.pop("content_type", UNSET))

        attachment_in = cls(
            content_base64=content_base64,
            filename=filename,
            content_type=content_type,
        )

        attachment_in.additional_properties = d
        return attachment_in

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
