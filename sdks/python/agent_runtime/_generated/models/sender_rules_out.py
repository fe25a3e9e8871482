from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    cast,
)

T = TypeVar("T", bound="SenderRulesOut")


@_dataclass
class SenderRulesOut:
    """An inbox's sender rules, and how much inbound mail they kept out (counted, never stored).

    Attributes:
        allow (list[str]): Lowercased, each once, in the order given.
        block (list[str]):
        kept_out_count (int): Inbound mails kept out of the inbox by these rules, since the agent was created.
    """

    allow: list[str]
    block: list[str]
    kept_out_count: int
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allow = self.allow

        block = self.block

        kept_out_count = self.kept_out_count

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allow": allow,
                "block": block,
                "kept_out_count": kept_out_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow = cast(list[str], d.pop("allow"))

        block = cast(list[str], d.pop("block"))

        kept_out_count = d.pop("kept_out_count")

        sender_rules_out = cls(
            allow=allow,
            block=block,
            kept_out_count=kept_out_count,
        )

        sender_rules_out.additional_properties = d
        return sender_rules_out

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
