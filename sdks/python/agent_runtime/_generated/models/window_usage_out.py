from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import Any, TypeVar

T = TypeVar("T", bound="WindowUsageOut")


@_dataclass
class WindowUsageOut:
    """What a window the policy caps holds, and what a transfer may still take of it.

    Attributes:
        remaining_atomic (str): Integer in atomic units; `"0"` when the window holds its cap or more.
        spent_atomic (str): Integer in atomic units: held by intents whose money may still move, and moved within the
            window.
    """

    remaining_atomic: str
    spent_atomic: str
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        remaining_atomic = self.remaining_atomic

        spent_atomic = self.spent_atomic

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "remaining_atomic": remaining_atomic,
                "spent_atomic": spent_atomic,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        remaining_atomic = d.pop("remaining_atomic")

        spent_atomic = d.pop("spent_atomic")

        window_usage_out = cls(
            remaining_atomic=remaining_atomic,
            spent_atomic=spent_atomic,
        )

        window_usage_out.additional_properties = d
        return window_usage_out

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
