-- Atlas launcher: one lease per message being launched (SQLite's stand-in for a PostgreSQL
-- advisory lock), one row per launch of Claude Code, and its stream-json journal.

CREATE TABLE atlas_leases (
    email_id     INTEGER PRIMARY KEY REFERENCES atlas_emails(id),
    holder       TEXT NOT NULL,
    acquired_at  TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);

CREATE TABLE atlas_launches (
    id            INTEGER PRIMARY KEY,
    email_id      INTEGER NOT NULL REFERENCES atlas_emails(id),
    iteration     INTEGER NOT NULL DEFAULT 1,
    prompt_kind   TEXT NOT NULL CHECK (prompt_kind IN ('run', 'rich', 'rich_plan', 'iteration')),
    max_turns     INTEGER NOT NULL DEFAULT 0,
    workspace     TEXT NOT NULL,
    branch        TEXT,
    fork_commit   TEXT,
    status        TEXT NOT NULL DEFAULT 'running' CHECK (status IN
                    ('running', 'ok', 'idle', 'hard_timeout', 'error', 'bad_arguments', 'interrupted')),
    exit_code     INTEGER,
    killed        TEXT,
    session_id    TEXT,
    cost_usd      REAL,
    num_turns     INTEGER,
    duration_ms   INTEGER,
    events        INTEGER NOT NULL DEFAULT 0,
    redactions    INTEGER NOT NULL DEFAULT 0,
    contract      TEXT,
    started_at    TEXT NOT NULL,
    finished_at   TEXT
);
CREATE INDEX atlas_launches_email ON atlas_launches(email_id);

-- Every stream-json event, redacted before it is written.
CREATE TABLE atlas_launch_events (
    id          INTEGER PRIMARY KEY,
    launch_id   INTEGER NOT NULL REFERENCES atlas_launches(id),
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    subtype     TEXT,
    tool_name   TEXT,
    payload     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (launch_id, seq)
);

-- Per-client model choices: the provider and model of the draft replies (seed §6.4), and
-- Claude Code's `--model` for that client's runs (the per-client override comes first).
ALTER TABLE atlas_clients ADD COLUMN ai_provider TEXT CHECK (ai_provider IN ('mistral', 'anthropic', 'openai'));
ALTER TABLE atlas_clients ADD COLUMN ai_model TEXT;
ALTER TABLE atlas_clients ADD COLUMN claude_model TEXT;

-- Draft replies to the client, written for the founder to read: Atlas never sends them.
CREATE TABLE atlas_drafts (
    id          INTEGER PRIMARY KEY,
    email_id    INTEGER NOT NULL REFERENCES atlas_emails(id),
    text        TEXT NOT NULL,
    provider    TEXT NOT NULL,
    model       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX atlas_drafts_email ON atlas_drafts(email_id);
