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

from ..models.confirmed_by import ConfirmedBy
from ..models.intent_kind import IntentKind
from ..models.intent_status import IntentStatus
from ..types import UNSET, Unset, isoparse

if TYPE_CHECKING:
    from ..models.approvals_out import ApprovalsOut
    from ..models.x402_payment_out import X402PaymentOut


T = TypeVar("T", bound="TransferIntentOut")


@_dataclass
class TransferIntentOut:
    """
    Attributes:
        amount_atomic (str): Integer in atomic units.
        approvals (ApprovalsOut): The distinct operators' approvals an intent needs and has.
        asset (str):
        chain (str):
        created_at (datetime.datetime):
        id (UUID):
        kind (IntentKind): What an intent moves money by: `transfer`, a transaction this service sends
            (`/v1/wallet/send`), or `x402`, an authorization the payee settles.
        recipient_address (str): EIP-55 checksummed.
        status (IntentStatus): Where a transfer intent stands.
        updated_at (datetime.datetime):
        confirmed_at (Union[None, Unset, datetime.datetime]):
        confirmed_by (Union[ConfirmedBy, None, Unset]):
        failure_reason (Union[None, Unset, str]):
        token_address (Union[None, Unset, str]):
        tx_hash (Union[None, Unset, str]): The newest transaction sent for the intent, and once executed the one that
            was mined;
            `null` until a transaction is signed.
        x402 (Union['X402PaymentOut', None, Unset]):
    """

    amount_atomic: str
    approvals: "ApprovalsOut"
    asset: str
    chain: str
    created_at: datetime.datetime
    id: UUID
    kind: IntentKind
    recipient_address: str
    status: IntentStatus
    updated_at: datetime.datetime
    confirmed_at: Union[None, Unset, datetime.datetime] = UNSET
    confirmed_by: Union[ConfirmedBy, None, Unset] = UNSET
    failure_reason: Union[None, Unset, str] = UNSET
    token_address: Union[None, Unset, str] = UNSET
    tx_hash: Union[None, Unset, str] = UNSET
    x402: Union["X402PaymentOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.x402_payment_out import X402PaymentOut

        amount_atomic = self.amount_atomic

        approvals = self.approvals.to_dict()

        asset = self.asset

        chain = self.chain

        created_at = self.created_at.isoformat()

        id = str(self.id)

        kind = self.kind.value

        recipient_address = self.recipient_address

        status = self.status.value

        updated_at = self.updated_at.isoformat()

        confirmed_at: Union[None, Unset, str]
        if isinstance(self.confirmed_at, Unset):
            confirmed_at = UNSET
        elif isinstance(self.confirmed_at, datetime.datetime):
            confirmed_at = self.confirmed_at.isoformat()
        else:
            confirmed_at = self.confirmed_at

        confirmed_by: Union[None, Unset, str]
        if isinstance(self.confirmed_by, Unset):
            confirmed_by = UNSET
        elif isinstance(self.confirmed_by, ConfirmedBy):
            confirmed_by = self.confirmed_by.value
        else:
            confirmed_by = self.confirmed_by

        failure_reason: Union[None, Unset, str]
        if isinstance(self.failure_reason, Unset):
            failure_reason = UNSET
        else:
            failure_reason = self.failure_reason

        token_address: Union[None, Unset, str]
        if isinstance(self.token_address, Unset):
            token_address = UNSET
        else:
            token_address = self.token_address

        tx_hash: Union[None, Unset, str]
        if isinstance(self.tx_hash, Unset):
            tx_hash = UNSET
        else:
            tx_hash = self.tx_hash

        x402: Union[None, Unset, dict[str, Any]]
        if isinstance(self.x402, Unset):
            x402 = UNSET
        elif isinstance(self.x402, X402PaymentOut):
            x402 = self.x402.to_dict()
        else:
            x402 = self.x402

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount_atomic": amount_atomic,
                "approvals": approvals,
                "asset": asset,
                "chain": chain,
                "created_at": created_at,
                "id": id,
                "kind": kind,
                "recipient_address": recipient_address,
                "status": status,
                "updated_at": updated_at,
            }
        )
        if confirmed_at is not UNSET:
            field_dict["confirmed_at"] = confirmed_at
        if confirmed_by is not UNSET:
            field_dict["confirmed_by"] = confirmed_by
        if failure_reason is not UNSET:
            field_dict["failure_reason"] = failure_reason
        if token_address is not UNSET:
            field_dict["token_address"] = token_address
        if tx_hash is not UNSET:
            field_dict["tx_hash"] = tx_hash
        if x402 is not UNSET:
            field_dict["x402"] = x402

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.approvals_out import ApprovalsOut
        from ..models.x402_payment_out import X402PaymentOut

        d = dict(src_dict)
        amount_atomic = d.pop("amount_atomic")

        approvals = ApprovalsOut.from_dict(d.pop("approvals"))

        asset = d.pop("asset")

        chain = d.pop("chain")

        created_at = isoparse(d.pop("created_at"))

        id = UUID(d.pop("id"))

        kind = IntentKind(d.pop("kind"))

        recipient_address = d.pop("recipient_address")

        status = IntentStatus(d.pop("status"))

        updated_at = isoparse(d.pop("updated_at"))

        def _parse_confirmed_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                confirmed_at_type_0 = isoparse(data)

                return confirmed_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        confirmed_at = _parse_confirmed_at(d.pop("confirmed_at", UNSET))

        def _parse_confirmed_by(data: object) -> Union[ConfirmedBy, None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                confirmed_by_type_1 = ConfirmedBy(data)

                return confirmed_by_type_1
            except:  # noqa: E722
                pass
            return cast(Union[ConfirmedBy, None, Unset], data)

        confirmed_by = _parse_confirmed_by(d.pop("confirmed_by", UNSET))

        def _parse_failure_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        failure_reason = _parse_failure_reason(d.pop("failure_reason", UNSET))

        def _parse_token_address(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        token_address = _parse_token_address(d.pop("token_address", UNSET))

        def _parse_tx_hash(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        tx_hash = _parse_tx_hash(d.pop("tx_hash", UNSET))

        def _parse_x402(data: object) -> Union["X402PaymentOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                x402_type_1 = X402PaymentOut.from_dict(data)

                return x402_type_1
            except:  # noqa: E722
                pass
            return cast(Union["X402PaymentOut", None, Unset], data)

        x402 = _parse_x402(d.pop("x402", UNSET))

        transfer_intent_out = cls(
            amount_atomic=amount_atomic,
            approvals=approvals,
            asset=asset,
            chain=chain,
            created_at=created_at,
            id=id,
            kind=kind,
            recipient_address=recipient_address,
            status=status,
            updated_at=updated_at,
            confirmed_at=confirmed_at,
            confirmed_by=confirmed_by,
            failure_reason=failure_reason,
            token_address=token_address,
            tx_hash=tx_hash,
            x402=x402,
        )

        transfer_intent_out.additional_properties = d
        return transfer_intent_out

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
