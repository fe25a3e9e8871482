from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import Any, TypeVar

T = TypeVar("T", bound="ReceiptKeyOut")


@_dataclass
class ReceiptKeyOut:
    """A key receipts are or were signed with.

    Attributes:
        algorithm (str): `Ed25519`.
        id (str): What a receipt's `receipt_key_id` names.
        public_key (str): Base64url (unpadded) of the 32 raw bytes of the public key.
    """

    algorithm: str
    id: str
    public_key: str
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        algorithm = self.algorithm

        id = self.id

        public_key = self.public_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "algorithm": algorithm,
                "id": id,
                "public_key": public_key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        algorithm = d.pop("algorithm")

        id = d.pop("id")

        public_key = d.pop("public_key")

        receipt_key_out = cls(
            algorithm=algorithm,
            id=id,
            public_key=public_key,
        )

        receipt_key_out.additional_properties = d
        return receipt_key_out

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
