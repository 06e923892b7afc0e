-- Atlas: the dedicated mailbox's messages, their state rows, the audit journal, the
-- clients the classifier is told about, and what a classification materialises.
@postgres -- PostgreSQL version of migrations/sqlite/0004_atlas.sql (types: see 0001_memory.sql;
@postgres -- REAL becomes DOUBLE PRECISION, BLOB becomes BYTEA).

CREATE TABLE atlas_clients (
    id          {id},
    name        TEXT NOT NULL UNIQUE,
    -- Monthly recurring revenue in euros; NULL = not confirmed.
    mrr         {real} CHECK (mrr IS NULL OR mrr >= 0),
    status      TEXT NOT NULL DEFAULT 'actif' CHECK (status IN ('actif', 'prospect', 'inactif')),
    priority    TEXT NOT NULL DEFAULT 'normale' CHECK (priority IN ('basse', 'normale', 'haute')),
    created_at  {time} NOT NULL
);

-- An address (`kind = 'email'`, exact) or a domain (`kind = 'domain'`) that identifies a client.
CREATE TABLE atlas_client_addresses (
    id          {id},
    client_id   {int} NOT NULL REFERENCES atlas_clients(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('email', 'domain')),
    value       TEXT NOT NULL UNIQUE
);

-- Open work streams a message can be attached to; creating one stays manual.
CREATE TABLE atlas_chantiers (
    id          {id},
    name        TEXT NOT NULL,
    client_id   {int} REFERENCES atlas_clients(id),
    status      TEXT NOT NULL DEFAULT 'ouvert' CHECK (status IN ('ouvert', 'ferme', 'annule')),
    created_at  {time} NOT NULL
);

-- The message as received, once per account and Message-ID (or raw-bytes hash).
CREATE TABLE atlas_raw_messages (
    id           {id},
    account      TEXT NOT NULL,
    message_key  TEXT NOT NULL,
    message_id   TEXT,
    imap_uid     {int},
    from_email   TEXT,
    subject      TEXT,
    raw          {blob} NOT NULL,
    size         {int} NOT NULL,
    dkim_pass    {int} NOT NULL DEFAULT 0 CHECK (dkim_pass IN (0, 1)),
    dkim_detail  TEXT,
    received_at  {time} NOT NULL,
    UNIQUE (account, message_key)
);

-- One state row per message: where it is in the pipeline and what the classifier decided.
CREATE TABLE atlas_emails (
    id                 {id},
    raw_message_id     {int} NOT NULL UNIQUE REFERENCES atlas_raw_messages(id),
    status             TEXT NOT NULL CHECK (status IN
                         ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
                          'spawned', 'actioned', 'failed')),
    scan_verdict       TEXT CHECK (scan_verdict IN ('clean', 'infected', 'error')),
    scanned_parts      {int},
    attachment_count   {int},
    attempts           {int} NOT NULL DEFAULT 0,
    client_id          {int} REFERENCES atlas_clients(id),
    client_source      TEXT CHECK (client_source IN ('envelope', 'forwarded-body', 'unknown')),
    is_forward         {int} CHECK (is_forward IN (0, 1)),
    intent             TEXT CHECK (intent IN ('run', 'question', 'noise', 'negociation', 'conseil')),
    complexity         TEXT CHECK (complexity IN ('leger', 'plan')),
    confidence         {real} CHECK (confidence >= 0 AND confidence <= 1),
    model              TEXT,
    justification      TEXT,
    classified_at      {time},
    chantier_id        {int} REFERENCES atlas_chantiers(id),
    run_id             {int},
    question_id        {int},
    negociation_id     {int},
    conseil_id         {int},
    created_at         {time} NOT NULL,
    updated_at         {time} NOT NULL
);
CREATE INDEX atlas_emails_status ON atlas_emails(status);

-- Every transition and guard, with a JSON detail (counts and reasons, never message text).
CREATE TABLE atlas_audits (
    id          {id},
    email_id    {int} REFERENCES atlas_emails(id),
    event       TEXT NOT NULL,
    detail      TEXT NOT NULL DEFAULT '{}',
    created_at  {time} NOT NULL
);
CREATE INDEX atlas_audits_email ON atlas_audits(email_id, event, created_at);
CREATE INDEX atlas_audits_time ON atlas_audits(created_at);

-- What a classification materialises: at most one row per message, in exactly one table.
-- status: 'ouvert' (to do), 'fait' (done), 'annule' (the founder refused it).
CREATE TABLE atlas_runs (
    id          {id},
    email_id    {int} NOT NULL UNIQUE REFERENCES atlas_emails(id),
    client_id   {int} REFERENCES atlas_clients(id),
    chantier_id {int} REFERENCES atlas_chantiers(id),
    complexity  TEXT NOT NULL CHECK (complexity IN ('leger', 'plan')),
    status      TEXT NOT NULL DEFAULT 'ouvert' CHECK (status IN ('ouvert', 'fait', 'annule')),
    created_at  {time} NOT NULL
);
CREATE TABLE atlas_questions (
    id          {id},
    email_id    {int} NOT NULL UNIQUE REFERENCES atlas_emails(id),
    client_id   {int} REFERENCES atlas_clients(id),
    chantier_id {int} REFERENCES atlas_chantiers(id),
    status      TEXT NOT NULL DEFAULT 'ouvert' CHECK (status IN ('ouvert', 'fait', 'annule')),
    created_at  {time} NOT NULL
);
CREATE TABLE atlas_negociations (
    id          {id},
    email_id    {int} NOT NULL UNIQUE REFERENCES atlas_emails(id),
    client_id   {int} REFERENCES atlas_clients(id),
    status      TEXT NOT NULL DEFAULT 'ouvert' CHECK (status IN ('ouvert', 'fait', 'annule')),
    created_at  {time} NOT NULL
);
CREATE TABLE atlas_conseils (
    id          {id},
    email_id    {int} NOT NULL UNIQUE REFERENCES atlas_emails(id),
    client_id   {int} REFERENCES atlas_clients(id),
    status      TEXT NOT NULL DEFAULT 'ouvert' CHECK (status IN ('ouvert', 'fait', 'annule')),
    created_at  {time} NOT NULL
);
