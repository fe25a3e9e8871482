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

T = TypeVar("T", bound="AttachmentOut")


@_dataclass
class AttachmentOut:
    """
    Attributes:
        content_type (str): `type/subtype`.
        id (str): Unique in its message and stable: `att_` and its position, from 1. Example: att_1.
        size (int): Bytes of the decoded content.
        stored (bool): Whether its bytes are kept and can be downloaded: false for one over
            `EMAIL_ATTACHMENT_MAX_BYTES` or one the provider delivered as metadata only.
        content_id (Union[None, Unset, str]):
        filename (Union[None, Unset, str]): The name the sender gave, as given (its download's name is made safe to
            save).
    """

    content_type: str
    id: str
    size: int
    stored: bool
    content_id: Union[None, Unset, str] = UNSET
    filename: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        content_type = self.content_type

        id = self.id

        size = self.size

        stored = self.stored

        content_id: Union[None, Unset, str]
        if isinstance(self.content_id, Unset):
            content_id = UNSET
        else:
            content_id = self.content_id

        filename: Union[None, Unset, str]
        if isinstance(self.filename, Unset):
            filename = UNSET
        else:
            filename = self.filename

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "content_type": content_type,
                "id": id,
                "size": size,
                "stored": stored,
            }
        )
        if content_id is not UNSET:
            field_dict["content_id"] = content_id
        if filename is not UNSET:
            field_dict["filename"] = filename

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        content_type = d.pop("content_type")

        id = d.pop("id")

        size = d.pop("size")

        stored = d.pop("stored")

        def _parse_content_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        content_id = _parse_content_id(d.pop("content_id", UNSET))

        def _parse_filename(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        filename = _parse_filename(d.pop("filename", UNSET))

        attachment_out = cls(
            content_type=content_type,
            id=id,
            size=size,
            stored=stored,
            content_id=content_id,
            filename=filename,
        )

        attachment_out.additional_properties = d
        return attachment_out

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
