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

T = TypeVar("T", bound="ServerSentEvent")


@_dataclass
class ServerSentEvent:
    """One message of `GET /v1/events/stream`, as an SSE client reads it: `retry` first, then each
    event's `id` (its `seq`), `event` (its type, or `reset`) and `data` (the event as one line of
    JSON; for `reset`, `{"after": <seq>}`). Comment lines keep the stream open.

        Attributes:
            data (Union[None, Unset, str]):
            event (Union[None, Unset, str]):
            id (Union[None, Unset, str]):
            retry (Union[None, Unset, int]):
    """

    data: Union[None, Unset, str] = UNSET
    event: Union[None, Unset, str] = UNSET
    id: Union[None, Unset, str] = UNSET
    retry: Union[None, Unset, int] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: Union[None, Unset, str]
        if isinstance(self.data, Unset):
            data = UNSET
        else:
            data = self.data

        event: Union[None, Unset, str]
        if isinstance(self.event, Unset):
            event = UNSET
        else:
            event = self.event

        id: Union[None, Unset, str]
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        retry: Union[None, Unset, int]
        if isinstance(self.retry, Unset):
            retry = UNSET
        else:
            retry = self.retry

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if event is not UNSET:
            field_dict["event"] = event
        if id is not UNSET:
            field_dict["id"] = id
        if retry is not UNSET:
            field_dict["retry"] = retry

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_data(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        data = _parse_data(d.pop("data", UNSET))

        def _parse_event(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        event = _parse_event(d.pop("event", UNSET))

        def _parse_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_retry(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        retry = _parse_retry(d.pop("retry", UNSET))

        server_sent_event = cls(
            data=data,
            event=event,
            id=id,
            retry=retry,
        )

        server_sent_event.additional_properties = d
        return server_sent_event

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
