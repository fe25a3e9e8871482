from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

if TYPE_CHECKING:
    from ..models.wallet_asset_balance import WalletAssetBalance


T = TypeVar("T", bound="WalletBalanceResponse")


@_dataclass
class WalletBalanceResponse:
    """
    Attributes:
        address (str):
        assets (list['WalletAssetBalance']):
        chain (str):
        wallet_id (str):
    """

    address: str
    assets: list["WalletAssetBalance"]
    chain: str
    wallet_id: str
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        assets = []
        for assets_item_data in self.assets:
            assets_item = assets_item_data.to_dict()
            assets.append(assets_item)

        chain = self.chain

        wallet_id = self.wallet_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "address": address,
                "assets": assets,
                "chain": chain,
                "wallet_id": wallet_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.wallet_asset_balance import WalletAssetBalance

        d = dict(src_dict)
        address = d.pop("address")

        assets = []
        _assets = d.pop("assets")
        for assets_item_data in _assets:
            assets_item = WalletAssetBalance.from_dict(assets_item_data)

            assets.append(assets_item)

        chain = d.pop("chain")

        wallet_id = d.pop("wallet_id")

        wallet_balance_response = cls(
            address=address,
            assets=assets,
            chain=chain,
            wallet_id=wallet_id,
        )

        wallet_balance_response.additional_properties = d
        return wallet_balance_response

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
