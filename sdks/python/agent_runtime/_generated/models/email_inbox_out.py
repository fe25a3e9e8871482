import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
)
from uuid import UUID

from ..types import isoparse

T = TypeVar("T", bound="EmailInboxOut")


@_dataclass
class EmailInboxOut:
    """
    Attributes:
        address (str):
        created_at (datetime.datetime):
        id (UUID):
    """

    address: str
    created_at: datetime.datetime
    id: UUID
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        created_at = self.created_at.isoformat()

        id = str(self.id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "address": address,
                "created_at": created_at,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        address = d.pop("address")

        created_at = isoparse(d.pop("created_at"))

        id = UUID(d.pop("id"))

        email_inbox_out = cls(
            address=address,
            created_at=created_at,
            id=id,
        )

        email_inbox_out.additional_properties = d
        return email_inbox_out

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
