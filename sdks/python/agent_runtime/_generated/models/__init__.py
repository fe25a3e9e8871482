"""Contains all the data models used in inputs/outputs"""

from .agent_response import AgentResponse
from .approvals_out import ApprovalsOut
from .attachment_in import AttachmentIn
from .attachment_out import AttachmentOut
from .channel import Channel
from .code_out import CodeOut
from .codes_wait_request import CodesWaitRequest
from .confirmed_by import ConfirmedBy
from .direction import Direction
from .email_failed_data import EmailFailedData
from .email_forward_request import EmailForwardRequest
from .email_inbox_out import EmailInboxOut
from .email_inbox_page import EmailInboxPage
from .email_message_out import EmailMessageOut
from .email_message_out_headers import EmailMessageOutHeaders
from .email_received_data import EmailReceivedData
from .email_reply_request import EmailReplyRequest
from .email_send_request import EmailSendRequest
from .email_send_request_headers_type_0 import EmailSendRequestHeadersType0
from .email_send_response import EmailSendResponse
from .email_sent_data import EmailSentData
from .email_status import EmailStatus
from .error_body import ErrorBody
from .event_out import EventOut
from .event_page import EventPage
from .event_type_name import EventTypeName
from .fetched_response_out import FetchedResponseOut
from .fetched_response_out_headers import FetchedResponseOutHeaders
from .intent_kind import IntentKind
from .intent_status import IntentStatus
from .key_create_request import KeyCreateRequest
from .key_created_out import KeyCreatedOut
from .key_in_use_out import KeyInUseOut
from .key_list_out import KeyListOut
from .key_out import KeyOut
from .parsed_data_out import ParsedDataOut
from .phone_number_out import PhoneNumberOut
from .phone_number_response import PhoneNumberResponse
from .policy_verdict_out import PolicyVerdictOut
from .receipt_key_out import ReceiptKeyOut
from .receipt_keys_out import ReceiptKeysOut
from .receipt_out import ReceiptOut
from .receipt_out_receipt import ReceiptOutReceipt
from .recipient_limit_out import RecipientLimitOut
from .scope_name import ScopeName
from .send_status import SendStatus
from .sender_rules_out import SenderRulesOut
from .sender_rules_request import SenderRulesRequest
from .server_sent_event import ServerSentEvent
from .sms_message_out import SmsMessageOut
from .sms_raw_payload import SmsRawPayload
from .sms_received_data import SmsReceivedData
from .spend_policy_out import SpendPolicyOut
from .spend_policy_response import SpendPolicyResponse
from .spend_usage_out import SpendUsageOut
from .status_body import StatusBody
from .thread_detail_out import ThreadDetailOut
from .thread_out import ThreadOut
from .thread_page_out import ThreadPageOut
from .transfer_intent_out import TransferIntentOut
from .transfer_intent_page import TransferIntentPage
from .validation_error_body import ValidationErrorBody
from .validation_item import ValidationItem
from .validation_item_ctx_type_0 import ValidationItemCtxType0
from .verification_code_response import VerificationCodeResponse
from .wait_for_code_request import WaitForCodeRequest
from .wallet_address_response import WalletAddressResponse
from .wallet_asset_balance import WalletAssetBalance
from .wallet_balance_response import WalletBalanceResponse
from .wallet_out import WalletOut
from .wallet_send_request import WalletSendRequest
from .wallet_status import WalletStatus
from .webhook_attempt_out import WebhookAttemptOut
from .webhook_attempt_page import WebhookAttemptPage
from .webhook_create_request import WebhookCreateRequest
from .webhook_out import WebhookOut
from .webhook_replay_request import WebhookReplayRequest
from .webhook_replay_response import WebhookReplayResponse
from .webhook_update_request import WebhookUpdateRequest
from .window_usage_out import WindowUsageOut
from .x402_authorization_status import X402AuthorizationStatus
from .x402_authorize_request import X402AuthorizeRequest
from .x402_authorize_request_payment_required import X402AuthorizeRequestPaymentRequired
from .x402_authorized_out import X402AuthorizedOut
from .x402_check_request import X402CheckRequest
from .x402_check_request_payment_required import X402CheckRequestPaymentRequired
from .x402_fetch_failed_out import X402FetchFailedOut
from .x402_fetch_out import X402FetchOut
from .x402_fetch_payment_out import X402FetchPaymentOut
from .x402_fetch_payment_out_settlement_type_0 import X402FetchPaymentOutSettlementType0
from .x402_fetch_request import X402FetchRequest
from .x402_fetch_request_headers_type_0 import X402FetchRequestHeadersType0
from .x402_fetch_status import X402FetchStatus
from .x402_payment_out import X402PaymentOut
from .x402_payment_out_payment_response_type_0 import X402PaymentOutPaymentResponseType0
from .x402_pending_out import X402PendingOut

__all__ = (
    "AgentResponse",
    "ApprovalsOut",
    "AttachmentIn",
    "AttachmentOut",
    "Channel",
    "CodeOut",
    "CodesWaitRequest",
    "ConfirmedBy",
    "Direction",
    "EmailFailedData",
    "EmailForwardRequest",
    "EmailInboxOut",
    "EmailInboxPage",
    "EmailMessageOut",
    "EmailMessageOutHeaders",
    "EmailReceivedData",
    "EmailReplyRequest",
    "EmailSendRequest",
    "EmailSendRequestHeadersType0",
    "EmailSendResponse",
    "EmailSentData",
    "EmailStatus",
    "ErrorBody",
    "EventOut",
    "EventPage",
    "EventTypeName",
    "FetchedResponseOut",
    "FetchedResponseOutHeaders",
    "IntentKind",
    "IntentStatus",
    "KeyCreatedOut",
    "KeyCreateRequest",
    "KeyInUseOut",
    "KeyListOut",
    "KeyOut",
    "ParsedDataOut",
    "PhoneNumberOut",
    "PhoneNumberResponse",
    "PolicyVerdictOut",
    "ReceiptKeyOut",
    "ReceiptKeysOut",
    "ReceiptOut",
    "ReceiptOutReceipt",
    "RecipientLimitOut",
    "ScopeName",
    "SenderRulesOut",
    "SenderRulesRequest",
    "SendStatus",
    "ServerSentEvent",
    "SmsMessageOut",
    "SmsRawPayload",
    "SmsReceivedData",
    "SpendPolicyOut",
    "SpendPolicyResponse",
    "SpendUsageOut",
    "StatusBody",
    "ThreadDetailOut",
    "ThreadOut",
    "ThreadPageOut",
    "TransferIntentOut",
    "TransferIntentPage",
    "ValidationErrorBody",
    "ValidationItem",
    "ValidationItemCtxType0",
    "VerificationCodeResponse",
    "WaitForCodeRequest",
    "WalletAddressResponse",
    "WalletAssetBalance",
    "WalletBalanceResponse",
    "WalletOut",
    "WalletSendRequest",
    "WalletStatus",
    "WebhookAttemptOut",
    "WebhookAttemptPage",
    "WebhookCreateRequest",
    "WebhookOut",
    "WebhookReplayRequest",
    "WebhookReplayResponse",
    "WebhookUpdateRequest",
    "WindowUsageOut",
    "X402AuthorizationStatus",
    "X402AuthorizedOut",
    "X402AuthorizeRequest",
    "X402AuthorizeRequestPaymentRequired",
    "X402CheckRequest",
    "X402CheckRequestPaymentRequired",
    "X402FetchFailedOut",
    "X402FetchOut",
    "X402FetchPaymentOut",
    "X402FetchPaymentOutSettlementType0",
    "X402FetchRequest",
    "X402FetchRequestHeadersType0",
    "X402FetchStatus",
    "X402PaymentOut",
    "X402PaymentOutPaymentResponseType0",
    "X402PendingOut",
)
