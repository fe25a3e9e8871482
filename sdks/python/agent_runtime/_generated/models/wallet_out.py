import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)
from uuid import UUID

from ..models.wallet_status import WalletStatus
from ..types import UNSET, Unset, isoparse

if TYPE_CHECKING:
    from ..models.spend_policy_out import SpendPolicyOut


T = TypeVar("T", bound="WalletOut")


@_dataclass
class WalletOut:
    """
    Attributes:
        address (str): EIP-55 checksummed.
        chain (str):
        created_at (datetime.datetime):
        custody (str):
        delegated (bool):
        id (UUID):
        provider (str):
        status (WalletStatus): Whether a wallet may be used: `active`.
        spend_policy (Union['SpendPolicyOut', None, Unset]):
    """

    address: str
    chain: str
    created_at: datetime.datetime
    custody: str
    delegated: bool
    id: UUID
    provider: str
    status: WalletStatus
    spend_policy: Union["SpendPolicyOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.spend_policy_out import SpendPolicyOut

        address = self.address

        chain = self.chain

        created_at = self.created_at.isoformat()

        custody = self.custody

        delegated = self.delegated

        id = str(self.id)

        provider = self.provider

        status = self.status.value

        spend_policy: Union[None, Unset, dict[str, Any]]
        if isinstance(self.spend_policy, Unset):
            spend_policy = UNSET
        elif isinstance(self.spend_policy, SpendPolicyOut):
            spend_policy = self.spend_policy.to_dict()
        else:
            spend_policy = self.spend_policy

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "address": address,
                "chain": chain,
                "created_at": created_at,
                "custody": custody,
                "delegated": delegated,
                "id": id,
                "provider": provider,
                "status": status,
            }
        )
        if spend_policy is not UNSET:
            field_dict["spend_policy"] = spend_policy

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.spend_policy_out import SpendPolicyOut

        d = dict(src_dict)
        address = d.pop("address")

        chain = d.pop("chain")

        created_at = isoparse(d.pop("created_at"))

        custody = d.pop("custody")

        delegated = d.pop("delegated")

        id = UUID(d.pop("id"))

        provider = d.pop("provider")

        status = WalletStatus(d.pop("status"))

        def _parse_spend_policy(data: object) -> Union["SpendPolicyOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spend_policy_type_1 = SpendPolicyOut.from_dict(data)

                return spend_policy_type_1
            except:  # noqa: E722
                pass
            return cast(Union["SpendPolicyOut", None, Unset], data)

        spend_policy = _parse_spend_policy(d.pop("spend_policy", UNSET))

        wallet_out = cls(
            address=address,
            chain=chain,
            created_at=created_at,
            custody=custody,
            delegated=delegated,
            id=id,
            provider=provider,
            status=status,
            spend_policy=spend_policy,
        )

        wallet_out.additional_properties = d
        return wallet_out

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
