@postgres -- Atlas launcher: one row per launch of Claude Code, and its stream-json journal.
@postgres -- PostgreSQL version of migrations/sqlite/0005_atlas_launch.sql.
@postgres --
@postgres -- atlas_leases is kept, same columns, so that both backends share the launcher's code and
@postgres -- its `watch_locks` view of who holds what; on PostgreSQL the exclusion itself is meant to
@postgres -- come from a session-level pg_try_advisory_lock(email_id) held for the launch (released
@postgres -- when the connection or the worker process dies), the lease row being its journal.
@sqlite -- Atlas launcher: one lease per message being launched (SQLite's stand-in for a PostgreSQL
@sqlite -- advisory lock), one row per launch of Claude Code, and its stream-json journal.

CREATE TABLE atlas_leases (
    email_id     {int} PRIMARY KEY REFERENCES atlas_emails(id),
    holder       TEXT NOT NULL,
    acquired_at  {time} NOT NULL,
    expires_at   {time} NOT NULL
);

CREATE TABLE atlas_launches (
    id            {id},
    email_id      {int} NOT NULL REFERENCES atlas_emails(id),
    iteration     {int} NOT NULL DEFAULT 1,
    prompt_kind   TEXT NOT NULL CHECK (prompt_kind IN ('run', 'rich', 'rich_plan', 'iteration')),
    max_turns     {int} NOT NULL DEFAULT 0,
    workspace     TEXT NOT NULL,
    branch        TEXT,
    fork_commit   TEXT,
    status        TEXT NOT NULL DEFAULT 'running' CHECK (status IN
                    ('running', 'ok', 'idle', 'hard_timeout', 'error', 'bad_arguments', 'interrupted')),
    exit_code     {int},
    killed        TEXT,
    session_id    TEXT,
    cost_usd      {real},
    num_turns     {int},
    duration_ms   {int},
    events        {int} NOT NULL DEFAULT 0,
    redactions    {int} NOT NULL DEFAULT 0,
    contract      TEXT,
    started_at    {time} NOT NULL,
    finished_at   {time}
);
CREATE INDEX atlas_launches_email ON atlas_launches(email_id);

-- Every stream-json event, redacted before it is written.
CREATE TABLE atlas_launch_events (
    id          {id},
    launch_id   {int} NOT NULL REFERENCES atlas_launches(id),
    seq         {int} NOT NULL,
    type        TEXT NOT NULL,
    subtype     TEXT,
    tool_name   TEXT,
    payload     TEXT NOT NULL,
    created_at  {time} NOT NULL,
    UNIQUE (launch_id, seq)
);

-- Per-client model choices: the provider and model of the draft replies (seed §6.4), and
-- Claude Code's `--model` for that client's runs (the per-client override comes first).
ALTER TABLE atlas_clients ADD COLUMN ai_provider TEXT CHECK (ai_provider IN ('mistral', 'anthropic', 'openai'));
ALTER TABLE atlas_clients ADD COLUMN ai_model TEXT;
ALTER TABLE atlas_clients ADD COLUMN claude_model TEXT;

-- Draft replies to the client, written for the founder to read: Atlas never sends them.
CREATE TABLE atlas_drafts (
    id          {id},
    email_id    {int} NOT NULL REFERENCES atlas_emails(id),
    text        TEXT NOT NULL,
    provider    TEXT NOT NULL,
    model       TEXT NOT NULL,
    created_at  {time} NOT NULL
);
CREATE INDEX atlas_drafts_email ON atlas_drafts(email_id);
