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

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recipient_limit_out import RecipientLimitOut
    from ..models.spend_usage_out import SpendUsageOut


T = TypeVar("T", bound="SpendPolicyOut")


@_dataclass
class SpendPolicyOut:
    """The spend policy nested in a wallet: the effective policy plus its id.

    Attributes:
        asset (str):
        chain (str):
        decimals (int):
        x402_enabled (bool): Whether the wallet pays x402 challenges (`/v1/wallet/x402/*`); `true` unless an operator
            turned them off.
        id (UUID):
        allowlisted_addresses (Union[None, Unset, list[str]]): `null` when no allowlist is configured; an empty list
            allows no recipient.
        approvals_required (Union[None, Unset, int]): Distinct operators' approvals a transfer above
            `approvals_required_above_atomic` needs (2
            to 5; every transfer when no amount is set); under it, one. `null`: one for every
            transfer.
        approvals_required_above_atomic (Union[None, Unset, str]): Integer in atomic units; `null` when not configured.
        auto_confirm_daily_atomic (Union[None, Unset, str]): Integer in atomic units; `null` when not configured.
        auto_confirm_max_atomic (Union[None, Unset, str]): A transfer at or under this amount, while those the policy
            confirmed in the rolling 24
            hours stay within `auto_confirm_daily_atomic`, is confirmed by the policy at creation.
            Integer in atomic units; `null` when not configured.
        max_daily_atomic (Union[None, Unset, str]): Integer in atomic units; `null` when no limit is configured.
        max_monthly_atomic (Union[None, Unset, str]): Cap over a rolling 30 days, counted like the daily cap. Integer in
            atomic units; `null`
            when not configured.
        max_per_tx_atomic (Union[None, Unset, str]): Integer in atomic units; `null` when no limit is configured.
        max_weekly_atomic (Union[None, Unset, str]): Cap over a rolling 7 days, counted like the daily cap. Integer in
            atomic units; `null`
            when not configured.
        recipient_limits (Union[None, Unset, list['RecipientLimitOut']]): Caps for single counterparties, on top of the
            wallet's; `null` when none is configured.
        token_address (Union[None, Unset, str]): `null` for the chain's native asset.
        usage (Union['SpendUsageOut', None, Unset]):
    """

    asset: str
    chain: str
    decimals: int
    x402_enabled: bool
    id: UUID
    allowlisted_addresses: Union[None, Unset, list[str]] = UNSET
    approvals_required: Union[None, Unset, int] = UNSET
    approvals_required_above_atomic: Union[None, Unset, str] = UNSET
    auto_confirm_daily_atomic: Union[None, Unset, str] = UNSET
    auto_confirm_max_atomic: Union[None, Unset, str] = UNSET
    max_daily_atomic: Union[None, Unset, str] = UNSET
    max_monthly_atomic: Union[None, Unset, str] = UNSET
    max_per_tx_atomic: Union[None, Unset, str] = UNSET
    max_weekly_atomic: Union[None, Unset, str] = UNSET
    recipient_limits: Union[None, Unset, list["RecipientLimitOut"]] = UNSET
    token_address: Union[None, Unset, str] = UNSET
    usage: Union["SpendUsageOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.spend_usage_out import SpendUsageOut

        asset = self.asset

        chain = self.chain

        decimals = self.decimals

        x402_enabled = self.x402_enabled

        id = str(self.id)

        allowlisted_addresses: Union[None, Unset, list[str]]
        if isinstance(self.allowlisted_addresses, Unset):
            allowlisted_addresses = UNSET
        elif isinstance(self.allowlisted_addresses, list):
            allowlisted_addresses = self.allowlisted_addresses

        else:
            allowlisted_addresses = self.allowlisted_addresses

        approvals_required: Union[None, Unset, int]
        if isinstance(self.approvals_required, Unset):
            approvals_required = UNSET
        else:
            approvals_required = self.approvals_required

        approvals_required_above_atomic: Union[None, Unset, str]
        if isinstance(self.approvals_required_above_atomic, Unset):
            approvals_required_above_atomic = UNSET
        else:
            approvals_required_above_atomic = self.approvals_required_above_atomic

        auto_confirm_daily_atomic: Union[None, Unset, str]
        if isinstance(self.auto_confirm_daily_atomic, Unset):
            auto_confirm_daily_atomic = UNSET
        else:
            auto_confirm_daily_atomic = self.auto_confirm_daily_atomic

        auto_confirm_max_atomic: Union[None, Unset, str]
        if isinstance(self.auto_confirm_max_atomic, Unset):
            auto_confirm_max_atomic = UNSET
        else:
            auto_confirm_max_atomic = self.auto_confirm_max_atomic

        max_daily_atomic: Union[None, Unset, str]
        if isinstance(self.max_daily_atomic, Unset):
            max_daily_atomic = UNSET
        else:
            max_daily_atomic = self.max_daily_atomic

        max_monthly_atomic: Union[None, Unset, str]
        if isinstance(self.max_monthly_atomic, Unset):
            max_monthly_atomic = UNSET
        else:
            max_monthly_atomic = self.max_monthly_atomic

        max_per_tx_atomic: Union[None, Unset, str]
        if isinstance(self.max_per_tx_atomic, Unset):
            max_per_tx_atomic = UNSET
        else:
            max_per_tx_atomic = self.max_per_tx_atomic

        max_weekly_atomic: Union[None, Unset, str]
        if isinstance(self.max_weekly_atomic, Unset):
            max_weekly_atomic = UNSET
        else:
            max_weekly_atomic = self.max_weekly_atomic

        recipient_limits: Union[None, Unset, list[dict[str, Any]]]
        if isinstance(self.recipient_limits, Unset):
            recipient_limits = UNSET
        elif isinstance(self.recipient_limits, list):
            recipient_limits = []
            for recipient_limits_type_0_item_data in self.recipient_limits:
                recipient_limits_type_0_item = recipient_limits_type_0_item_data.to_dict()
                recipient_limits.append(recipient_limits_type_0_item)

        else:
            recipient_limits = self.recipient_limits

        token_address: Union[None, Unset, str]
        if isinstance(self.token_address, Unset):
            token_address = UNSET
        else:
            token_address = self.token_address

        usage: Union[None, Unset, dict[str, Any]]
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, SpendUsageOut):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "asset": asset,
                "chain": chain,
                "decimals": decimals,
                "x402_enabled": x402_enabled,
                "id": id,
            }
        )
        if allowlisted_addresses is not UNSET:
            field_dict["allowlisted_addresses"] = allowlisted_addresses
        if approvals_required is not UNSET:
            field_dict["approvals_required"] = approvals_required
        if approvals_required_above_atomic is not UNSET:
            field_dict["approvals_required_above_atomic"] = approvals_required_above_atomic
        if auto_confirm_daily_atomic is not UNSET:
            field_dict["auto_confirm_daily_atomic"] = auto_confirm_daily_atomic
        if auto_confirm_max_atomic is not UNSET:
            field_dict["auto_confirm_max_atomic"] = auto_confirm_max_atomic
        if max_daily_atomic is not UNSET:
            field_dict["max_daily_atomic"] = max_daily_atomic
        if max_monthly_atomic is not UNSET:
            field_dict["max_monthly_atomic"] = max_monthly_atomic
        if max_per_tx_atomic is not UNSET:
            field_dict["max_per_tx_atomic"] = max_per_tx_atomic
        if max_weekly_atomic is not UNSET:
            field_dict["max_weekly_atomic"] = max_weekly_atomic
        if recipient_limits is not UNSET:
            field_dict["recipient_limits"] = recipient_limits
        if token_address is not UNSET:
            field_dict["token_address"] = token_address
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.recipient_limit_out import RecipientLimitOut
        from ..models.spend_usage_out import SpendUsageOut

        d = dict(src_dict)
        asset = d.pop("asset")

        chain = d.pop("chain")

        decimals = d.pop("decimals")

        x402_enabled = d.pop("x402_enabled")

        id = UUID(d.pop("id"))

        def _parse_allowlisted_addresses(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowlisted_addresses_type_0 = cast(list[str], data)

                return allowlisted_addresses_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        allowlisted_addresses = _parse_allowlisted_addresses(d.pop("allowlisted_addresses", UNSET))

        def _parse_approvals_required(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        approvals_required = _parse_approvals_required(d.pop("approvals_required", UNSET))

        def _parse_approvals_required_above_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        approvals_required_above_atomic = _parse_approvals_required_above_atomic(
            d.pop("approvals_required_above_atomic", UNSET)
        )

        def _parse_auto_confirm_daily_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        auto_confirm_daily_atomic = _parse_auto_confirm_daily_atomic(d.pop("auto_confirm_daily_atomic", UNSET))

        def _parse_auto_confirm_max_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        auto_confirm_max_atomic = _parse_auto_confirm_max_atomic(d.pop("auto_confirm_max_atomic", UNSET))

        def _parse_max_daily_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_daily_atomic = _parse_max_daily_atomic(d.pop("max_daily_atomic", UNSET))

        def _parse_max_monthly_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_monthly_atomic = _parse_max_monthly_atomic(d.pop("max_monthly_atomic", UNSET))

        def _parse_max_per_tx_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_per_tx_atomic = _parse_max_per_tx_atomic(d.pop("max_per_tx_atomic", UNSET))

        def _parse_max_weekly_atomic(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        max_weekly_atomic = _parse_max_weekly_atomic(d.pop("max_weekly_atomic", UNSET))

        def _parse_recipient_limits(data: object) -> Union[None, Unset, list["RecipientLimitOut"]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                recipient_limits_type_0 = []
                _recipient_limits_type_0 = data
                for recipient_limits_type_0_item_data in _recipient_limits_type_0:
                    recipient_limits_type_0_item = RecipientLimitOut.from_dict(recipient_limits_type_0_item_data)

                    recipient_limits_type_0.append(recipient_limits_type_0_item)

                return recipient_limits_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list["RecipientLimitOut"]], data)

        recipient_limits = _parse_recipient_limits(d.pop("recipient_limits", UNSET))

        def _parse_token_address(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        token_address = _parse_token_address(d.pop("token_address", UNSET))

        def _parse_usage(data: object) -> Union["SpendUsageOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_1 = SpendUsageOut.from_dict(data)

                return usage_type_1
            except:  # noqa: E722
                pass
            return cast(Union["SpendUsageOut", None, Unset], data)

        usage = _parse_usage(d.pop("usage", UNSET))

        spend_policy_out = cls(
            asset=asset,
            chain=chain,
            decimals=decimals,
            x402_enabled=x402_enabled,
            id=id,
            allowlisted_addresses=allowlisted_addresses,
            approvals_required=approvals_required,
            approvals_required_above_atomic=approvals_required_above_atomic,
            auto_confirm_daily_atomic=auto_confirm_daily_atomic,
            auto_confirm_max_atomic=auto_confirm_max_atomic,
            max_daily_atomic=max_daily_atomic,
            max_monthly_atomic=max_monthly_atomic,
            max_per_tx_atomic=max_per_tx_atomic,
            max_weekly_atomic=max_weekly_atomic,
            recipient_limits=recipient_limits,
            token_address=token_address,
            usage=usage,
        )

        spend_policy_out.additional_properties = d
        return spend_policy_out

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
