import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
)

from ..models.event_type_name import EventTypeName
from ..types import isoparse

if TYPE_CHECKING:
    from ..models.email_failed_data import EmailFailedData
    from ..models.email_received_data import EmailReceivedData
    from ..models.email_sent_data import EmailSentData
    from ..models.sms_received_data import SmsReceivedData
    from ..models.transfer_intent_out import TransferIntentOut


T = TypeVar("T", bound="EventOut")


@_dataclass
class EventOut:
    """One event: the same id and body in the feed, on the stream and in every webhook attempt.

    Attributes:
        data (Union['EmailFailedData', 'EmailReceivedData', 'EmailSentData', 'SmsReceivedData', 'TransferIntentOut']):
            The facts of the event, by its type: ids and the few fields an agent acts on; the full record
            stays behind its GET route. A transfer intent's events carry the intent as it was then.
        id (str): `evt_` and 32 hex digits. Example: evt_0193a1b2c3d47e8f9a0b1c2d3e4f5a6b.
        seq (int): Per agent, strictly increasing in commit order, without gaps.
        timestamp (datetime.datetime): When the change committed.
        type_ (EventTypeName): What happened: `email.received`, `email.sent`, `email.failed`, `sms.received`, or
            `transfer_intent.` and the state an intent entered (`created`, `confirmed`, `rejected`,
            `expired`, `submitted`, `executed`, `failed`).
    """

    data: Union["EmailFailedData", "EmailReceivedData", "EmailSentData", "SmsReceivedData", "TransferIntentOut"]
    id: str
    seq: int
    timestamp: datetime.datetime
    type_: EventTypeName
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.email_failed_data import EmailFailedData
        from ..models.email_received_data import EmailReceivedData
        from ..models.email_sent_data import EmailSentData
        from ..models.sms_received_data import SmsReceivedData

        data: dict[str, Any]
        if isinstance(self.data, EmailReceivedData):
            data = self.data.to_dict()
        elif isinstance(self.data, EmailSentData):
            data = self.data.to_dict()
        elif isinstance(self.data, EmailFailedData):
            data = self.data.to_dict()
        elif isinstance(self.data, SmsReceivedData):
            data = self.data.to_dict()
        else:
            data = self.data.to_dict()

        id = self.id

        seq = self.seq

        timestamp = self.timestamp.isoformat()

        type_ = self.type_.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "id": id,
                "seq": seq,
                "timestamp": timestamp,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.email_failed_data import EmailFailedData
        from ..models.email_received_data import EmailReceivedData
        from ..models.email_sent_data import EmailSentData
        from ..models.sms_received_data import SmsReceivedData
        from ..models.transfer_intent_out import TransferIntentOut

        d = dict(src_dict)

        def _parse_data(
            data: object,
        ) -> Union["EmailFailedData", "EmailReceivedData", "EmailSentData", "SmsReceivedData", "TransferIntentOut"]:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_event_data_type_0 = EmailReceivedData.from_dict(data)

                return componentsschemas_event_data_type_0
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_event_data_type_1 = EmailSentData.from_dict(data)

                return componentsschemas_event_data_type_1
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_event_data_type_2 = EmailFailedData.from_dict(data)

                return componentsschemas_event_data_type_2
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_event_data_type_3 = SmsReceivedData.from_dict(data)

                return componentsschemas_event_data_type_3
            except:  # noqa: E722
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_event_data_type_4 = TransferIntentOut.from_dict(data)

            return componentsschemas_event_data_type_4

        data = _parse_data(d.pop("data"))

        id = d.pop("id")

        seq = d.pop("seq")

        timestamp = isoparse(d.pop("timestamp"))

        type_ = EventTypeName(d.pop("type"))

        event_out = cls(
            data=data,
            id=id,
            seq=seq,
            timestamp=timestamp,
            type_=type_,
        )

        event_out.additional_properties = d
        return event_out

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
