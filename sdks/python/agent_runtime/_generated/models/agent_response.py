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

from ..types import UNSET, Unset, isoparse

if TYPE_CHECKING:
    from ..models.email_inbox_out import EmailInboxOut
    from ..models.key_in_use_out import KeyInUseOut
    from ..models.phone_number_out import PhoneNumberOut
    from ..models.wallet_out import WalletOut


T = TypeVar("T", bound="AgentResponse")


@_dataclass
class AgentResponse:
    """
    Attributes:
        id (UUID):
        is_active (bool):
        agent_key_hash (Union[None, Unset, str]): First 16 hex characters of the SHA-256 of the key in use (of the first
            key, where an
            operator reads the agent); the key itself is never returned.
        created_at (Union[None, Unset, datetime.datetime]):
        email_inbox (Union['EmailInboxOut', None, Unset]):
        key (Union['KeyInUseOut', None, Unset]):
        label (Union[None, Unset, str]):
        phone_number (Union['PhoneNumberOut', None, Unset]):
        wallet (Union['WalletOut', None, Unset]):
    """

    id: UUID
    is_active: bool
    agent_key_hash: Union[None, Unset, str] = UNSET
    created_at: Union[None, Unset, datetime.datetime] = UNSET
    email_inbox: Union["EmailInboxOut", None, Unset] = UNSET
    key: Union["KeyInUseOut", None, Unset] = UNSET
    label: Union[None, Unset, str] = UNSET
    phone_number: Union["PhoneNumberOut", None, Unset] = UNSET
    wallet: Union["WalletOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.email_inbox_out import EmailInboxOut
        from ..models.key_in_use_out import KeyInUseOut
        from ..models.phone_number_out import PhoneNumberOut
        from ..models.wallet_out import WalletOut

        id = str(self.id)

        is_active = self.is_active

        agent_key_hash: Union[None, Unset, str]
        if isinstance(self.agent_key_hash, Unset):
            agent_key_hash = UNSET
        else:
            agent_key_hash = self.agent_key_hash

        created_at: Union[None, Unset, str]
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        elif isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        email_inbox: Union[None, Unset, dict[str, Any]]
        if isinstance(self.email_inbox, Unset):
            email_inbox = UNSET
        elif isinstance(self.email_inbox, EmailInboxOut):
            email_inbox = self.email_inbox.to_dict()
        else:
            email_inbox = self.email_inbox

        key: Union[None, Unset, dict[str, Any]]
        if isinstance(self.key, Unset):
            key = UNSET
        elif isinstance(self.key, KeyInUseOut):
            key = self.key.to_dict()
        else:
            key = self.key

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        phone_number: Union[None, Unset, dict[str, Any]]
        if isinstance(self.phone_number, Unset):
            phone_number = UNSET
        elif isinstance(self.phone_number, PhoneNumberOut):
            phone_number = self.phone_number.to_dict()
        else:
            phone_number = self.phone_number

        wallet: Union[None, Unset, dict[str, Any]]
        if isinstance(self.wallet, Unset):
            wallet = UNSET
        elif isinstance(self.wallet, WalletOut):
            wallet = self.wallet.to_dict()
        else:
            wallet = self.wallet

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "is_active": is_active,
            }
        )
        if agent_key_hash is not UNSET:
            field_dict["agent_key_hash"] = agent_key_hash
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if email_inbox is not UNSET:
            field_dict["email_inbox"] = email_inbox
        if key is not UNSET:
            field_dict["key"] = key
        if label is not UNSET:
            field_dict["label"] = label
        if phone_number is not UNSET:
            field_dict["phone_number"] = phone_number
        if wallet is not UNSET:
            field_dict["wallet"] = wallet

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.email_inbox_out import EmailInboxOut
        from ..models.key_in_use_out import KeyInUseOut
        from ..models.phone_number_out import PhoneNumberOut
        from ..models.wallet_out import WalletOut

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        is_active = d.pop("is_active")

        def _parse_agent_key_hash(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        agent_key_hash = _parse_agent_key_hash(d.pop("agent_key_hash", UNSET))

        def _parse_created_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = isoparse(data)

                return created_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_email_inbox(data: object) -> Union["EmailInboxOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                email_inbox_type_1 = EmailInboxOut.from_dict(data)

                return email_inbox_type_1
            except:  # noqa: E722
                pass
            return cast(Union["EmailInboxOut", None, Unset], data)

        email_inbox = _parse_email_inbox(d.pop("email_inbox", UNSET))

        def _parse_key(data: object) -> Union["KeyInUseOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                key_type_1 = KeyInUseOut.from_dict(data)

                return key_type_1
            except:  # noqa: E722
                pass
            return cast(Union["KeyInUseOut", None, Unset], data)

        key = _parse_key(d.pop("key", UNSET))

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        def _parse_phone_number(data: object) -> Union["PhoneNumberOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                phone_number_type_1 = PhoneNumberOut.from_dict(data)

                return phone_number_type_1
            except:  # noqa: E722
                pass
            return cast(Union["PhoneNumberOut", None, Unset], data)

        phone_number = _parse_phone_number(d.pop("phone_number", UNSET))

        def _parse_wallet(data: object) -> Union["WalletOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                wallet_type_1 = WalletOut.from_dict(data)

                return wallet_type_1
            except:  # noqa: E722
                pass
            return cast(Union["WalletOut", None, Unset], data)

        wallet = _parse_wallet(d.pop("wallet", UNSET))

        agent_response = cls(
            id=id,
            is_active=is_active,
            agent_key_hash=agent_key_hash,
            created_at=created_at,
            email_inbox=email_inbox,
            key=key,
            label=label,
            phone_number=phone_number,
            wallet=wallet,
        )

        agent_response.additional_properties = d
        return agent_response

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
