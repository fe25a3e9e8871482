DROP TRIGGER spend_policies_profile_changed ON spend_policies;
DROP TRIGGER wallets_profile_changed ON wallets;
DROP TRIGGER email_inboxes_profile_changed ON email_inboxes;
DROP TRIGGER phone_numbers_profile_changed ON phone_numbers;
DROP TRIGGER agents_profile_changed ON agents;
DROP FUNCTION agent_profiles_changed();
