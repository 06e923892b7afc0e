-- A write the offline parser was unsure of, waiting for the user's "oui" or "non".
-- One per conversation; taken (deleted) by the next message of that conversation.
CREATE TABLE pending_actions (
    conversation_id  TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    tool             TEXT NOT NULL,
@postgres     arguments        TEXT NOT NULL CHECK (arguments::jsonb IS NOT NULL),
@sqlite     arguments        TEXT NOT NULL CHECK (json_valid(arguments)),
    question         TEXT NOT NULL,
    created_at       {time} NOT NULL
);
