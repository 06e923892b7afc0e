-- Atlas after the launch (issue 18): a failing scan or classification backs off
-- (`retry_at`, 1, 2, 4 … 60 minutes) for up to a day (`failing_since`) before the message
-- parks — `scan_failed` for scanner errors, never `blocked`, which stays for an infected
-- attachment only; a timed-out launch is retried at most ATLAS_MAX_RETRIES times
-- (`launch_retries`), then `escalated`. Each launch records its attempt and how its
-- Claude Code session was handled (`session_mode`).
@sqlite --
@sqlite -- atlas_emails is rebuilt for its CHECK, as in 0007 (foreign keys deferred to the commit).
@sqlite PRAGMA defer_foreign_keys = ON;

@postgres ALTER TABLE atlas_emails DROP CONSTRAINT atlas_emails_status_check;
@postgres ALTER TABLE atlas_emails ADD CONSTRAINT atlas_emails_status_check CHECK (status IN
@postgres     ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
@postgres      'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled',
@postgres      'scan_failed', 'escalated'));
@postgres -- Parked by scanner errors (no verdict) is not blocked by an infection.
@postgres UPDATE atlas_emails SET status = 'scan_failed' WHERE status = 'blocked' AND scan_verdict IS NULL;
@postgres -- The next attempt of a failing scan or classification is not before this.
@postgres ALTER TABLE atlas_emails ADD COLUMN retry_at TEXT COLLATE "C";
@postgres -- The first failure of the current run of failures (cleared by a success).
@postgres ALTER TABLE atlas_emails ADD COLUMN failing_since TEXT COLLATE "C";
@postgres -- Launches that timed out and were retried.
@postgres ALTER TABLE atlas_emails ADD COLUMN launch_retries BIGINT NOT NULL DEFAULT 0 CHECK (launch_retries >= 0);
@sqlite CREATE TABLE atlas_emails_0007 AS SELECT * FROM atlas_emails;
@sqlite DROP TABLE atlas_emails;
@sqlite CREATE TABLE atlas_emails (
@sqlite     id                 INTEGER PRIMARY KEY,
@sqlite     raw_message_id     INTEGER NOT NULL UNIQUE REFERENCES atlas_raw_messages(id),
@sqlite     status             TEXT NOT NULL CHECK (status IN
@sqlite                          ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
@sqlite                           'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled',
@sqlite                           'scan_failed', 'escalated')),
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
@sqlite     approved_at        TEXT,
@sqlite     -- The next attempt of a failing scan or classification is not before this.
@sqlite     retry_at           TEXT,
@sqlite     -- The first failure of the current run of failures (cleared by a success).
@sqlite     failing_since      TEXT,
@sqlite     -- Launches that timed out and were retried.
@sqlite     launch_retries     INTEGER NOT NULL DEFAULT 0 CHECK (launch_retries >= 0)
@sqlite );
@sqlite INSERT INTO atlas_emails
@sqlite     (id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
@sqlite      client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
@sqlite      chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at, approved_at)
@sqlite SELECT id, raw_message_id,
@sqlite      -- Parked by scanner errors (no verdict) is not blocked by an infection.
@sqlite      CASE WHEN status = 'blocked' AND scan_verdict IS NULL THEN 'scan_failed' ELSE status END,
@sqlite      scan_verdict, scanned_parts, attachment_count, attempts, client_id,
@sqlite      client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
@sqlite      chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at, approved_at
@sqlite FROM atlas_emails_0007;
@sqlite DROP TABLE atlas_emails_0007;
@sqlite CREATE INDEX atlas_emails_status ON atlas_emails(status);

ALTER TABLE atlas_launches ADD COLUMN attempt {int} NOT NULL DEFAULT 1;
ALTER TABLE atlas_launches ADD COLUMN session_mode TEXT CHECK (session_mode IN
    ('not_saved', 'saved', 'resumed', 'fresh_after_refused_resume'));
