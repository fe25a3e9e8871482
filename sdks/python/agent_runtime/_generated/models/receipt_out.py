from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

if TYPE_CHECKING:
    from ..models.receipt_out_receipt import ReceiptOutReceipt


T = TypeVar("T", bound="ReceiptOut")


@_dataclass
class ReceiptOut:
    """The signed receipt of an executed intent.

    Attributes:
        receipt (ReceiptOutReceipt): `intent_id`, `kind`, `agent_id`, `wallet`, `recipient`, `amount_atomic`, `asset`,
            `network`, `tx_hash`, `block_number`, `resource_url` (x402 payments), `decided_by`
            (`policy` or the operator), `confirmed_at`, `executed_at`, `receipt_key_id`.
        signature (str): Base64url (unpadded) of the Ed25519 signature, by the key `receipt_key_id`, over the RFC
            8785 canonical JSON of `receipt`.
    """

    receipt: "ReceiptOutReceipt"
    signature: str
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        receipt = self.receipt.to_dict()

        signature = self.signature

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "receipt": receipt,
                "signature": signature,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.receipt_out_receipt import ReceiptOutReceipt

        d = dict(src_dict)
        receipt = ReceiptOutReceipt.from_dict(d.pop("receipt"))

        signature = d.pop("signature")

        receipt_out = cls(
            receipt=receipt,
            signature=signature,
        )

        receipt_out.additional_properties = d
        return receipt_out

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
