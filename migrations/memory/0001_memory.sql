@postgres -- Arthur's memory and work state (PostgreSQL). Same tables, columns and constraints as
@postgres -- migrations/sqlite/0001_memory.sql; the type choices keep the store code's SQL and binds
@postgres -- as close to SQLite's as possible:
@postgres --   * ids: BIGINT GENERATED ALWAYS AS IDENTITY (i64, like SQLite's INTEGER PRIMARY KEY).
@postgres --     ALWAYS: an INSERT naming the id is refused, so the sequence can never fall behind the
@postgres --     table (the store never names one); a copy of a SQLite database would use
@postgres --     OVERRIDING SYSTEM VALUE and then setval each sequence;
@postgres --   * every INTEGER is BIGINT (the store decodes i64) and flags stay 0/1 BIGINT with their
@postgres --     CHECK, as in SQLite, not BOOLEAN;
@postgres --   * timestamps stay TEXT, UTC RFC 3339 with milliseconds ("2026-11-30T09:00:00.000Z",
@postgres --     `time::to_db`), COLLATE "C" so that text order is byte order is time order whatever
@postgres --     the database's locale (SQLite's BINARY collation);
@postgres --   * JSON stays TEXT; json_valid(x) becomes (x::jsonb IS NOT NULL): invalid JSON makes
@postgres --     the cast, hence the INSERT, fail;
@postgres --   * the FTS5 table souvenirs_fts becomes a GIN expression index of the same name on
@postgres --     to_tsvector('french', texte) (see the end of this file).
@sqlite -- Arthur's memory and work state (SQLite). Timestamps are UTC, RFC 3339 text with
@sqlite -- milliseconds ("2026-11-30T09:00:00.000Z") so that text order is time order.

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY,
    domain      TEXT CHECK (domain IN ('TRAVAIL', 'QUOTIDIEN', 'PERSO')),
    created_at  {time} NOT NULL
);

CREATE TABLE messages (
    id               {id},
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role             TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content          TEXT NOT NULL,
    created_at       {time} NOT NULL
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);

-- One row per turn: what the router decided, every model call and tool call, the answer.
CREATE TABLE turn_traces (
    id               {id},
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_text        TEXT NOT NULL,
@postgres     trace            TEXT NOT NULL CHECK (trace::jsonb IS NOT NULL),
@sqlite     trace            TEXT NOT NULL CHECK (json_valid(trace)),
    written          TEXT,
    spoken           TEXT,
    status           TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    started_at       {time} NOT NULL,
    finished_at      {time}
);
CREATE INDEX turn_traces_by_conversation ON turn_traces(conversation_id, id);

CREATE TABLE projets (
    id              {id},
    nom             TEXT NOT NULL,
    nom_normalise   TEXT NOT NULL UNIQUE,
    description     TEXT,
    phase           TEXT,
    statut          TEXT NOT NULL DEFAULT 'actif'
                    CHECK (statut IN ('actif', 'en_pause', 'termine', 'abandonne')),
    created_at      {time} NOT NULL,
    updated_at      {time} NOT NULL
);

-- Every phase a project has been in, so "phases" is a history and not only a field.
CREATE TABLE phases_projet (
    id          {id},
    projet_id   {int} NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    phase       TEXT NOT NULL,
    since       {time} NOT NULL
);
CREATE INDEX phases_by_projet ON phases_projet(projet_id, id);

CREATE TABLE decisions (
    id          {id},
    projet_id   {int} NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    created_at  {time} NOT NULL
);
CREATE INDEX decisions_by_projet ON decisions(projet_id, id);

CREATE TABLE notes (
    id          {id},
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    projet_id   {int} REFERENCES projets(id) ON DELETE SET NULL,
    created_at  {time} NOT NULL
);
CREATE INDEX notes_by_projet ON notes(projet_id, id);

CREATE TABLE rappels (
    id          {id},
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    echeance    {time} NOT NULL,
    fait        {int} NOT NULL DEFAULT 0 CHECK (fait IN (0, 1)),
    fait_le     {time},
    created_at  {time} NOT NULL,
    CHECK ((fait = 0 AND fait_le IS NULL) OR (fait = 1 AND fait_le IS NOT NULL))
);
CREATE INDEX rappels_by_echeance ON rappels(fait, echeance);

CREATE TABLE preferences (
    id              {id},
    texte           TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    texte_normalise TEXT NOT NULL,
    active          {int} NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at      {time} NOT NULL,
    desactivee_le   {time},
    CHECK ((active = 1 AND desactivee_le IS NULL) OR (active = 0 AND desactivee_le IS NOT NULL))
);
CREATE INDEX preferences_active ON preferences(active, id);

CREATE TABLE souvenirs (
    id              {id},
    texte           TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    -- little-endian f32 vector; NULL when no embedding provider was reachable
    embedding       {blob},
    embedding_model TEXT,
    created_at      {time} NOT NULL,
    CHECK ((embedding IS NULL) = (embedding_model IS NULL))
);

@postgres -- Full-text search. SQLite has an external-content FTS5 table `souvenirs_fts` kept in step by
@postgres -- three triggers; PostgreSQL needs neither: a GIN index on the expression, under the same
@postgres -- name, always in step with the table. A query must use the very same expression to hit it:
@postgres --   WHERE to_tsvector('french', texte) @@ plainto_tsquery('french', $1)
@postgres --   ORDER BY ts_rank(to_tsvector('french', texte), plainto_tsquery('french', $1)) DESC, id
@postgres -- Differences with FTS5's 'unicode61 remove_diacritics 2': French stemming (a plus), but
@postgres -- accents are not folded (that needs the unaccent extension behind an IMMUTABLE wrapper).
@postgres CREATE INDEX souvenirs_fts ON souvenirs USING GIN (to_tsvector('french', texte));
@sqlite CREATE VIRTUAL TABLE souvenirs_fts USING fts5(
@sqlite     texte,
@sqlite     content = 'souvenirs',
@sqlite     content_rowid = 'id',
@sqlite     tokenize = 'unicode61 remove_diacritics 2'
@sqlite );
@sqlite CREATE TRIGGER souvenirs_ai AFTER INSERT ON souvenirs BEGIN
@sqlite     INSERT INTO souvenirs_fts(rowid, texte) VALUES (new.id, new.texte);
@sqlite END;
@sqlite CREATE TRIGGER souvenirs_ad AFTER DELETE ON souvenirs BEGIN
@sqlite     INSERT INTO souvenirs_fts(souvenirs_fts, rowid, texte) VALUES ('delete', old.id, old.texte);
@sqlite END;
@sqlite CREATE TRIGGER souvenirs_au AFTER UPDATE OF texte ON souvenirs BEGIN
@sqlite     INSERT INTO souvenirs_fts(souvenirs_fts, rowid, texte) VALUES ('delete', old.id, old.texte);
@sqlite     INSERT INTO souvenirs_fts(rowid, texte) VALUES (new.id, new.texte);
@sqlite END;

CREATE TABLE sessions_travail (
    id          {id},
    projet_id   {int} NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    debut       {time} NOT NULL,
    fin         {time},
    CHECK (fin IS NULL OR fin >= debut)
);
-- At most one running session: the chrono is single.
CREATE UNIQUE INDEX one_running_session ON sessions_travail((1)) WHERE fin IS NULL;
CREATE INDEX sessions_by_debut ON sessions_travail(debut);

CREATE TABLE pauses (
    id          {id},
    session_id  {int} NOT NULL REFERENCES sessions_travail(id) ON DELETE CASCADE,
    debut       {time} NOT NULL,
    fin         {time},
    CHECK (fin IS NULL OR fin >= debut)
);
-- At most one open pause per session.
CREATE UNIQUE INDEX one_open_pause ON pauses(session_id) WHERE fin IS NULL;
CREATE INDEX pauses_by_session ON pauses(session_id, id);
