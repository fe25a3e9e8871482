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

T = TypeVar("T", bound="WalletAssetBalance")


@_dataclass
class WalletAssetBalance:
    """
    Attributes:
        amount_atomic (str): Integer in atomic units.
        asset (str):
        chain (str):
        decimals (int):
        formatted_amount (str): The same amount as an exact decimal string.
        symbol (str):
        token_address (Union[None, Unset, str]): `null` for the native asset.
    """

    amount_atomic: str
    asset: str
    chain: str
    decimals: int
    formatted_amount: str
    symbol: str
    token_address: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount_atomic = self.amount_atomic

        asset = self.asset

        chain = self.chain

        decimals = self.decimals

        formatted_amount = self.formatted_amount

        symbol = self.symbol

        token_address: Union[None, Unset, str]
        if isinstance(self.token_address, Unset):
            token_address = UNSET
        else:
            token_address = self.token_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount_atomic": amount_atomic,
                "asset": asset,
                "chain": chain,
                "decimals": decimals,
                "formatted_amount": formatted_amount,
                "symbol": symbol,
            }
        )
        if token_address is not UNSET:
            field_dict["token_address"] = token_address

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        amount_atomic = d.pop("amount_atomic")

        asset = d.pop("asset")

        chain = d.pop("chain")

        decimals = d.pop("decimals")

        formatted_amount = d.pop("formatted_amount")

        symbol = d.pop("symbol")

        def _parse_token_address(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        token_address = _parse_token_address(d.pop("token_address", UNSET))

        wallet_asset_balance = cls(
            amount_atomic=amount_atomic,
            asset=asset,
            chain=chain,
            decimals=decimals,
            formatted_amount=formatted_amount,
            symbol=symbol,
            token_address=token_address,
        )

        wallet_asset_balance.additional_properties = d
        return wallet_asset_balance

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
