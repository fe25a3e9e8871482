from enum import Enum


class EventTypeName(str, Enum):
    EMAIL_FAILED = "email.failed"
    EMAIL_RECEIVED = "email.received"
    EMAIL_SENT = "email.sent"
    SMS_RECEIVED = "sms.received"
    TRANSFER_INTENT_AUTHORIZED = "transfer_intent.authorized"
    TRANSFER_INTENT_CONFIRMED = "transfer_intent.confirmed"
    TRANSFER_INTENT_CREATED = "transfer_intent.created"
    TRANSFER_INTENT_EXECUTED = "transfer_intent.executed"
    TRANSFER_INTENT_EXPIRED = "transfer_intent.expired"
    TRANSFER_INTENT_FAILED = "transfer_intent.failed"
    TRANSFER_INTENT_REJECTED = "transfer_intent.rejected"
    TRANSFER_INTENT_SUBMITTED = "transfer_intent.submitted"

    def __str__(self) -> str:
        return str(self.value)
