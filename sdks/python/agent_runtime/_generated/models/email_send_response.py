from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from ..models.send_status import SendStatus

if TYPE_CHECKING:
    from ..models.email_message_out import EmailMessageOut


T = TypeVar("T", bound="EmailSendResponse")


@_dataclass
class EmailSendResponse:
    """The answer to a send or a reply.

    Attributes:
        data (EmailMessageOut): A message of the inbox, inbound or outbound.
        status (SendStatus): The outcome of a send or a reply: `sent`, the message was accepted.
    """

    data: "EmailMessageOut"
    status: SendStatus
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.email_message_out import EmailMessageOut

        d = dict(src_dict)
        data = EmailMessageOut.from_dict(d.pop("data"))

        status = SendStatus(d.pop("status"))

        email_send_response = cls(
            data=data,
            status=status,
        )

        email_send_response.additional_properties = d
        return email_send_response

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
