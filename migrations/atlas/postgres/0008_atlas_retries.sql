-- Atlas after the launch (issue 18): a failing scan or classification backs off
-- (`retry_at`, 1, 2, 4 … 60 minutes) for up to a day (`failing_since`) before the message
-- parks — `scan_failed` for scanner errors, never `blocked`, which stays for an infected
-- attachment only; a timed-out launch is retried at most ATLAS_MAX_RETRIES times
-- (`launch_retries`), then `escalated`. Each launch records its attempt and how its
-- Claude Code session was handled (`session_mode`).

ALTER TABLE atlas_emails DROP CONSTRAINT atlas_emails_status_check;
ALTER TABLE atlas_emails ADD CONSTRAINT atlas_emails_status_check CHECK (status IN
    ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
     'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled',
     'scan_failed', 'escalated'));
-- Parked by scanner errors (no verdict) is not blocked by an infection.
UPDATE atlas_emails SET status = 'scan_failed' WHERE status = 'blocked' AND scan_verdict IS NULL;
-- The next attempt of a failing scan or classification is not before this.
ALTER TABLE atlas_emails ADD COLUMN retry_at TEXT COLLATE "C";
-- The first failure of the current run of failures (cleared by a success).
ALTER TABLE atlas_emails ADD COLUMN failing_since TEXT COLLATE "C";
-- Launches that timed out and were retried.
ALTER TABLE atlas_emails ADD COLUMN launch_retries BIGINT NOT NULL DEFAULT 0 CHECK (launch_retries >= 0);

ALTER TABLE atlas_launches ADD COLUMN attempt BIGINT NOT NULL DEFAULT 1;
ALTER TABLE atlas_launches ADD COLUMN session_mode TEXT CHECK (session_mode IN
    ('not_saved', 'saved', 'resumed', 'fresh_after_refused_resume'));
