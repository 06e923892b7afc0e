-- Atlas launch authority (issue 17): a message whose author is not verified waits in
-- `awaiting_approval` until the founder approves it (`approved_at`) or refuses it
-- (`cancelled`); a client's record may allow launches (`auto_launch`, off by default); the
-- e-mails Atlas sends the founder besides recaps are kept once per event (`atlas_notices`).
@sqlite --
@sqlite -- SQLite cannot change a CHECK in place: atlas_emails is rebuilt. Foreign keys stay on
@sqlite -- (a migration runs in one transaction, where `PRAGMA foreign_keys` cannot change), so
@sqlite -- their checks are deferred to the commit: dropping the old table orphans the audits,
@sqlite -- launches… for a moment, re-inserting every row resolves each of them, and the commit
@sqlite -- fails (nothing changes) if a single one were left.
@sqlite PRAGMA defer_foreign_keys = ON;

@postgres ALTER TABLE atlas_emails DROP CONSTRAINT atlas_emails_status_check;
@postgres ALTER TABLE atlas_emails ADD CONSTRAINT atlas_emails_status_check CHECK (status IN
@postgres     ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
@postgres      'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled'));
@postgres -- When the founder approved the launch of a message held for an unverified author.
@postgres ALTER TABLE atlas_emails ADD COLUMN approved_at TEXT COLLATE "C";
@sqlite CREATE TABLE atlas_emails_0006 AS SELECT * FROM atlas_emails;
@sqlite DROP TABLE atlas_emails;
@sqlite CREATE TABLE atlas_emails (
@sqlite     id                 INTEGER PRIMARY KEY,
@sqlite     raw_message_id     INTEGER NOT NULL UNIQUE REFERENCES atlas_raw_messages(id),
@sqlite     status             TEXT NOT NULL CHECK (status IN
@sqlite                          ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
@sqlite                           'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled')),
@sqlite     scan_verdict       TEXT CHECK (scan_verdict IN ('clean', 'infected', 'error')),
@sqlite     scanned_parts      INTEGER,
@sqlite     attachment_count   INTEGER,
@sqlite     attempts           INTEGER NOT NULL DEFAULT 0,
@sqlite     client_id          INTEGER REFERENCES atlas_clients(id),
@sqlite     client_source      TEXT CHECK (client_source IN ('envelope', 'forwarded-body', 'unknown')),
@sqlite     is_forward         INTEGER CHECK (is_forward IN (0, 1)),
@sqlite     intent             TEXT CHECK (intent IN ('run', 'question', 'noise', 'negociation', 'conseil')),
@sqlite     complexity         TEXT CHECK (complexity IN ('leger', 'plan')),
@sqlite     confidence         REAL CHECK (confidence >= 0 AND confidence <= 1),
@sqlite     model              TEXT,
@sqlite     justification      TEXT,
@sqlite     classified_at      TEXT,
@sqlite     chantier_id        INTEGER REFERENCES atlas_chantiers(id),
@sqlite     run_id             INTEGER,
@sqlite     question_id        INTEGER,
@sqlite     negociation_id     INTEGER,
@sqlite     conseil_id         INTEGER,
@sqlite     created_at         TEXT NOT NULL,
@sqlite     updated_at         TEXT NOT NULL,
@sqlite     -- When the founder approved the launch of a message held for an unverified author.
@sqlite     approved_at        TEXT
@sqlite );
@sqlite INSERT INTO atlas_emails
@sqlite     (id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
@sqlite      client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
@sqlite      chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at)
@sqlite SELECT id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
@sqlite      client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
@sqlite      chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at
@sqlite FROM atlas_emails_0006;
@sqlite DROP TABLE atlas_emails_0006;
@sqlite CREATE INDEX atlas_emails_status ON atlas_emails(status);

-- A client whose e-mails may start Claude Code without the founder's approval (their
-- DKIM-verified envelope only).
ALTER TABLE atlas_clients ADD COLUMN auto_launch {int} NOT NULL DEFAULT 0 CHECK (auto_launch IN (0, 1));

-- One row per e-mail to the founder that must go out once (an approval request, a parked
-- message, an escalation, a lock alert): the unique key makes a second worker, a replay or
-- a retry a no-op; unsent ones are retried (`attempts`, `last_try_at`, `last_error`).
CREATE TABLE atlas_notices (
    id           {id},
    email_id     {int} REFERENCES atlas_emails(id),
    kind         TEXT NOT NULL,
    dedupe_key   TEXT NOT NULL UNIQUE,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    attempts     {int} NOT NULL DEFAULT 0,
    last_try_at  {time},
    last_error   TEXT,
    sent_at      {time},
    created_at   {time} NOT NULL
);
CREATE INDEX atlas_notices_unsent ON atlas_notices(sent_at, created_at);
