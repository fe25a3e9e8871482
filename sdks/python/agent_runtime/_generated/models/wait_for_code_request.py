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

T = TypeVar("T", bound="WaitForCodeRequest")


@_dataclass
class WaitForCodeRequest:
    """
    Attributes:
        request_id (Union[None, Unset, str]): At most 128 characters: a retry with the same id returns the same result,
            and joins a
            wait with that id still in progress.
        service_name (Union[Unset, str]): Only a message from this service (e.g. `Google`); empty for any.
        timeout (Union[Unset, int]): Seconds to wait, 0 to 300; 0 looks once. Default: 300.
    """

    request_id: Union[None, Unset, str] = UNSET
    service_name: Union[Unset, str] = UNSET
    timeout: Union[Unset, int] = 300
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        request_id: Union[None, Unset, str]
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        service_name = self.service_name

        timeout = self.timeout

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if request_id is not UNSET:
            field_dict["request_id"] = request_id
        if service_name is not UNSET:
            field_dict["service_name"] = service_name
        if timeout is not UNSET:
            field_dict["timeout"] = timeout

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_request_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        service_name = d.pop("service_name", UNSET)

        timeout = d.pop("timeout", UNSET)

        wait_for_code_request = cls(
            request_id=request_id,
            service_name=service_name,
            timeout=timeout,
        )

        wait_for_code_request.additional_properties = d
        return wait_for_code_request

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
