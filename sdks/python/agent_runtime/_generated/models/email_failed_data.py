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

T = TypeVar("T", bound="EmailFailedData")


@_dataclass
class EmailFailedData:
    """
    Attributes:
        message_id (UUID):
        reason (Union[None, Unset, str]):
    """

    message_id: UUID
    reason: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        message_id = str(self.message_id)

        reason: Union[None, Unset, str]
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "message_id": message_id,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message_id = UUID(d.pop("message_id"))

        def _parse_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        reason = _parse_reason(d.pop("reason", UNSET))

        email_failed_data = cls(
            message_id=message_id,
            reason=reason,
        )

        return email_failed_data
