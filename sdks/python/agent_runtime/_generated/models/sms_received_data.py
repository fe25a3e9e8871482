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

T = TypeVar("T", bound="SmsReceivedData")


@_dataclass
class SmsReceivedData:
    """
    Attributes:
        from_number (str):
        message_id (UUID):
        to_number (str):
        code (Union[None, Unset, str]):
    """

    from_number: str
    message_id: UUID
    to_number: str
    code: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from_number = self.from_number

        message_id = str(self.message_id)

        to_number = self.to_number

        code: Union[None, Unset, str]
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "from_number": from_number,
                "message_id": message_id,
                "to_number": to_number,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_number = d.pop("from_number")

        message_id = UUID(d.pop("message_id"))

        to_number = d.pop("to_number")

        def _parse_code(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        code = _parse_code(d.pop("code", UNSET))

        sms_received_data = cls(
            from_number=from_number,
            message_id=message_id,
            to_number=to_number,
            code=code,
        )

        return sms_received_data
