DROP TRIGGER transfer_intents_spend_totals ON transfer_intents;
DROP FUNCTION transfer_intents_spend_totals();
DROP TRIGGER wallets_spend_totals ON wallets;
DROP FUNCTION wallet_spend_totals_create();
DROP TABLE wallet_spend_totals;
