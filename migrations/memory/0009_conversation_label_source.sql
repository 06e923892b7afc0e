-- Who set a conversation's domain label: the router's answer, or the deterministic
-- fallback (router garbage, no model reachable, offline first exchange).
ALTER TABLE conversations ADD COLUMN domain_source TEXT CHECK (domain_source IN ('router', 'fallback'));
