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
    from ..models.validation_item_ctx_type_0 import ValidationItemCtxType0


T = TypeVar("T", bound="ValidationItem")


@_dataclass
class ValidationItem:
    """One entry of a 422 `detail` list, as FastAPI (pydantic v2) writes it.

    Attributes:
        input_ (Any): The value as it was received: any JSON value, `null` for a missing body.
        loc (list[Union[int, str]]): Where: `body`, `query`, `path` or `header`, then field names and list indexes.
        msg (str): What is wrong, for a person.
        type_ (str): What kind of rule failed, e.g. `missing`, `value_error`, `greater_than_equal`.
        ctx (Union['ValidationItemCtxType0', None, Unset]): What the failed rule expected, e.g. `{"ge": 1}`.
    """

    input_: Any
    loc: list[Union[int, str]]
    msg: str
    type_: str
    ctx: Union["ValidationItemCtxType0", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.validation_item_ctx_type_0 import ValidationItemCtxType0

        input_ = self.input_

        loc = []
        for loc_item_data in self.loc:
            loc_item: Union[int, str]
            loc_item = loc_item_data
            loc.append(loc_item)

        msg = self.msg

        type_ = self.type_

        ctx: Union[None, Unset, dict[str, Any]]
        if isinstance(self.ctx, Unset):
            ctx = UNSET
        elif isinstance(self.ctx, ValidationItemCtxType0):
            ctx = self.ctx.to_dict()
        else:
            ctx = self.ctx

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "input": input_,
                "loc": loc,
                "msg": msg,
                "type": type_,
            }
        )
        if ctx is not UNSET:
            field_dict["ctx"] = ctx

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.validation_item_ctx_type_0 import ValidationItemCtxType0

        d = dict(src_dict)
        input_ = d.pop("input")

        loc = []
        _loc = d.pop("loc")
        for loc_item_data in _loc:

            def _parse_loc_item(data: object) -> Union[int, str]:
                return cast(Union[int, str], data)

            loc_item = _parse_loc_item(loc_item_data)

            loc.append(loc_item)

        msg = d.pop("msg")

        type_ = d.pop("type")

        def _parse_ctx(data: object) -> Union["ValidationItemCtxType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ctx_type_0 = ValidationItemCtxType0.from_dict(data)

                return ctx_type_0
            except:  # noqa: E722
                pass
            return cast(Union["ValidationItemCtxType0", None, Unset], data)

        ctx = _parse_ctx(d.pop("ctx", UNSET))

        validation_item = cls(
            input_=input_,
            loc=loc,
            msg=msg,
            type_=type_,
            ctx=ctx,
        )

        validation_item.additional_properties = d
        return validation_item

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
