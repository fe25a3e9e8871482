import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)
from uuid import UUID

from ..models.direction import Direction
from ..types import isoparse

if TYPE_CHECKING:
    from ..models.sms_raw_payload import SmsRawPayload


T = TypeVar("T", bound="SmsMessageOut")


@_dataclass
class SmsMessageOut:
    """
    Attributes:
        created_at (datetime.datetime):
        direction (Direction): Which way a message went: `inbound` (to the agent) or `outbound` (from it).
        from_number (str):
        message_id (UUID):
        raw_payload (SmsRawPayload): The provider's record of a message.
        to_number (str):
    """

    created_at: datetime.datetime
    direction: Direction
    from_number: str
    message_id: UUID
    raw_payload: "SmsRawPayload"
    to_number: str
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        direction = self.direction.value

        from_number = self.from_number

        message_id = str(self.message_id)

        raw_payload = self.raw_payload.to_dict()

        to_number = self.to_number

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "direction": direction,
                "from_number": from_number,
                "message_id": message_id,
                "raw_payload": raw_payload,
                "to_number": to_number,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sms_raw_payload import SmsRawPayload

        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        direction = Direction(d.pop("direction"))

        from_number = d.pop("from_number")

        message_id = UUID(d.pop("message_id"))

        raw_payload = SmsRawPayload.from_dict(d.pop("raw_payload"))

        to_number = d.pop("to_number")

        sms_message_out = cls(
            created_at=created_at,
            direction=direction,
            from_number=from_number,
            message_id=message_id,
            raw_payload=raw_payload,
            to_number=to_number,
        )

        sms_message_out.additional_properties = d
        return sms_message_out

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
