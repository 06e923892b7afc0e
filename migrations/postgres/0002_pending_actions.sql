-- A write the offline parser was unsure of, waiting for the user's "oui" or "non".
-- One per conversation; taken (deleted) by the next message of that conversation.
CREATE TABLE pending_actions (
    conversation_id  TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    tool             TEXT NOT NULL,
    arguments        TEXT NOT NULL CHECK (arguments::jsonb IS NOT NULL),
    question         TEXT NOT NULL,
    created_at       TEXT COLLATE "C" NOT NULL
);
