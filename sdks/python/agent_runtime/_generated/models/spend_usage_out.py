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

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.window_usage_out import WindowUsageOut


T = TypeVar("T", bound="SpendUsageOut")


@_dataclass
class SpendUsageOut:
    """Each window the policy caps; a window not configured is left out.

    Attributes:
        auto_confirm_daily (Union['WindowUsageOut', None, Unset]):
        daily (Union['WindowUsageOut', None, Unset]):
        monthly (Union['WindowUsageOut', None, Unset]):
        weekly (Union['WindowUsageOut', None, Unset]):
    """

    auto_confirm_daily: Union["WindowUsageOut", None, Unset] = UNSET
    daily: Union["WindowUsageOut", None, Unset] = UNSET
    monthly: Union["WindowUsageOut", None, Unset] = UNSET
    weekly: Union["WindowUsageOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.window_usage_out import WindowUsageOut

        auto_confirm_daily: Union[None, Unset, dict[str, Any]]
        if isinstance(self.auto_confirm_daily, Unset):
            auto_confirm_daily = UNSET
        elif isinstance(self.auto_confirm_daily, WindowUsageOut):
            auto_confirm_daily = self.auto_confirm_daily.to_dict()
        else:
            auto_confirm_daily = self.auto_confirm_daily

        daily: Union[None, Unset, dict[str, Any]]
        if isinstance(self.daily, Unset):
            daily = UNSET
        elif isinstance(self.daily, WindowUsageOut):
            daily = self.daily.to_dict()
        else:
            daily = self.daily

        monthly: Union[None, Unset, dict[str, Any]]
        if isinstance(self.monthly, Unset):
            monthly = UNSET
        elif isinstance(self.monthly, WindowUsageOut):
            monthly = self.monthly.to_dict()
        else:
            monthly = self.monthly

        weekly: Union[None, Unset, dict[str, Any]]
        if isinstance(self.weekly, Unset):
            weekly = UNSET
        elif isinstance(self.weekly, WindowUsageOut):
            weekly = self.weekly.to_dict()
        else:
            weekly = self.weekly

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if auto_confirm_daily is not UNSET:
            field_dict["auto_confirm_daily"] = auto_confirm_daily
        if daily is not UNSET:
            field_dict["daily"] = daily
        if monthly is not UNSET:
            field_dict["monthly"] = monthly
        if weekly is not UNSET:
            field_dict["weekly"] = weekly

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.window_usage_out import WindowUsageOut

        d = dict(src_dict)

        def _parse_auto_confirm_daily(data: object) -> Union["WindowUsageOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auto_confirm_daily_type_1 = WindowUsageOut.from_dict(data)

                return auto_confirm_daily_type_1
            except:  # noqa: E722
                pass
            return cast(Union["WindowUsageOut", None, Unset], data)

        auto_confirm_daily = _parse_auto_confirm_daily(d.pop("auto_confirm_daily", UNSET))

        def _parse_daily(data: object) -> Union["WindowUsageOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                daily_type_1 = WindowUsageOut.from_dict(data)

                return daily_type_1
            except:  # noqa: E722
                pass
            return cast(Union["WindowUsageOut", None, Unset], data)

        daily = _parse_daily(d.pop("daily", UNSET))

        def _parse_monthly(data: object) -> Union["WindowUsageOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                monthly_type_1 = WindowUsageOut.from_dict(data)

                return monthly_type_1
            except:  # noqa: E722
                pass
            return cast(Union["WindowUsageOut", None, Unset], data)

        monthly = _parse_monthly(d.pop("monthly", UNSET))

        def _parse_weekly(data: object) -> Union["WindowUsageOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                weekly_type_1 = WindowUsageOut.from_dict(data)

                return weekly_type_1
            except:  # noqa: E722
                pass
            return cast(Union["WindowUsageOut", None, Unset], data)

        weekly = _parse_weekly(d.pop("weekly", UNSET))

        spend_usage_out = cls(
            auto_confirm_daily=auto_confirm_daily,
            daily=daily,
            monthly=monthly,
            weekly=weekly,
        )

        spend_usage_out.additional_properties = d
        return spend_usage_out

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
