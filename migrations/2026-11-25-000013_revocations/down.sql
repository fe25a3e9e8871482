DROP TRIGGER agents_key_revoked ON agents;
DROP FUNCTION agent_key_revoked();
