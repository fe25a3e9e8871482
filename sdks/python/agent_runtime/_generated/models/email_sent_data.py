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

T = TypeVar("T", bound="EmailSentData")


@_dataclass
class EmailSentData:
    """
    Attributes:
        message_id (UUID):
        provider_message_id (Union[None, Unset, str]):
    """

    message_id: UUID
    provider_message_id: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        message_id = str(self.message_id)

        provider_message_id: Union[None, Unset, str]
        if isinstance(self.provider_message_id, Unset):
            provider_message_id = UNSET
        else:
            provider_message_id = self.provider_message_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "message_id": message_id,
            }
        )
        if provider_message_id is not UNSET:
            field_dict["provider_message_id"] = provider_message_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message_id = UUID(d.pop("message_id"))

        def _parse_provider_message_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        provider_message_id = _parse_provider_message_id(d.pop("provider_message_id", UNSET))

        email_sent_data = cls(
            message_id=message_id,
            provider_message_id=provider_message_id,
        )

        return email_sent_data
