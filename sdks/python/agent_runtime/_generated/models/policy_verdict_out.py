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
    from ..models.spend_usage_out import SpendUsageOut


T = TypeVar("T", bound="PolicyVerdictOut")


@_dataclass
class PolicyVerdictOut:
    """The spend policy's verdict on a transfer: whether it passed, else the rule that refused and
    why, what it is (or would be) once admitted, and what is left of each window.

        Attributes:
            allowed (bool):
            usage (SpendUsageOut): Each window the policy caps; a window not configured is left out.
            would_be (str): Where the transfer stands once admitted: `confirmed` when the policy's auto-confirm tier
                takes it, `pending_confirmation` (waiting for operators) otherwise, and for one refused.
            detail (Union[None, Unset, str]): Why it refused, with what the window still allows; `null` when allowed.
            rule (Union[None, Unset, str]): The rule that refused (`allowlist`, `max_per_tx`, `recipient_max_per_tx`,
                `max_daily`,
                `max_weekly`, `max_monthly`, `recipient_max_daily`); `null` when allowed.
    """

    allowed: bool
    usage: "SpendUsageOut"
    would_be: str
    detail: Union[None, Unset, str] = UNSET
    rule: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allowed = self.allowed

        usage = self.usage.to_dict()

        would_be = self.would_be

        detail: Union[None, Unset, str]
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        rule: Union[None, Unset, str]
        if isinstance(self.rule, Unset):
            rule = UNSET
        else:
            rule = self.rule

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed": allowed,
                "usage": usage,
                "would_be": would_be,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail
        if rule is not UNSET:
            field_dict["rule"] = rule

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.spend_usage_out import SpendUsageOut

        d = dict(src_dict)
        allowed = d.pop("allowed")

        usage = SpendUsageOut.from_dict(d.pop("usage"))

        would_be = d.pop("would_be")

        def _parse_detail(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        detail = _parse_detail(d.pop("detail", UNSET))

        def _parse_rule(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        rule = _parse_rule(d.pop("rule", UNSET))

        policy_verdict_out = cls(
            allowed=allowed,
            usage=usage,
            would_be=would_be,
            detail=detail,
            rule=rule,
        )

        policy_verdict_out.additional_properties = d
        return policy_verdict_out

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
