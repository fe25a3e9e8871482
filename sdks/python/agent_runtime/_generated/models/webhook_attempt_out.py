import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from ..models.event_type_name import EventTypeName
from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="WebhookAttemptOut")


@_dataclass
class WebhookAttemptOut:
    """
    Attributes:
        attempt (int): 1 for the first attempt at the event's delivery.
        attempted_at (datetime.datetime):
        duration_ms (int):
        event_id (str):
        event_type (EventTypeName): What happened: `email.received`, `email.sent`, `email.failed`, `sms.received`, or
            `transfer_intent.` and the state an intent entered (`created`, `confirmed`, `rejected`,
            `expired`, `submitted`, `executed`, `failed`).
        error (Union[None, Unset, str]): Why the attempt failed, in fixed words: `refused: not publicly routable`,
            `refused: a
            public address needs https`, `timed out`, `connection failed`, `refused: no secret of the
            endpoint can sign`, or `HTTP <status>` for an answer that is not 2xx. What the receiver
            wrote back is not shown.
        status_code (Union[None, Unset, int]): The receiver's status; `null` when there was none.
    """

    attempt: int
    attempted_at: datetime.datetime
    duration_ms: int
    event_id: str
    event_type: EventTypeName
    error: Union[None, Unset, str] = UNSET
    status_code: Union[None, Unset, int] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        attempted_at = self.attempted_at.isoformat()

        duration_ms = self.duration_ms

        event_id = self.event_id

        event_type = self.event_type.value

        error: Union[None, Unset, str]
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        status_code: Union[None, Unset, int]
        if isinstance(self.status_code, Unset):
            status_code = UNSET
        else:
            status_code = self.status_code

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "attempted_at": attempted_at,
                "duration_ms": duration_ms,
                "event_id": event_id,
                "event_type": event_type,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if status_code is not UNSET:
            field_dict["status_code"] = status_code

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        attempted_at = isoparse(d.pop("attempted_at"))

        duration_ms = d.pop("duration_ms")

        event_id = d.pop("event_id")

        event_type = EventTypeName(d.pop("event_type"))

        def _parse_error(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_status_code(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        status_code = _parse_status_code(d.pop("status_code", UNSET))

        webhook_attempt_out = cls(
            attempt=attempt,
            attempted_at=attempted_at,
            duration_ms=duration_ms,
            event_id=event_id,
            event_type=event_type,
            error=error,
            status_code=status_code,
        )

        webhook_attempt_out.additional_properties = d
        return webhook_attempt_out

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
