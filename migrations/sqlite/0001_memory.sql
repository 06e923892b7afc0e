-- Arthur's memory and work state (SQLite). Timestamps are UTC, RFC 3339 text with
-- milliseconds ("2026-11-30T09:00:00.000Z") so that text order is time order.

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY,
    domain      TEXT CHECK (domain IN ('TRAVAIL', 'QUOTIDIEN', 'PERSO')),
    created_at  TEXT NOT NULL
);

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role             TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content          TEXT NOT NULL,
    created_at       TEXT NOT NULL
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);

-- One row per turn: what the router decided, every model call and tool call, the answer.
CREATE TABLE turn_traces (
    id               INTEGER PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_text        TEXT NOT NULL,
    trace            TEXT NOT NULL CHECK (json_valid(trace)),
    written          TEXT,
    spoken           TEXT,
    status           TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    started_at       TEXT NOT NULL,
    finished_at      TEXT
);
CREATE INDEX turn_traces_by_conversation ON turn_traces(conversation_id, id);

CREATE TABLE projets (
    id              INTEGER PRIMARY KEY,
    nom             TEXT NOT NULL,
    nom_normalise   TEXT NOT NULL UNIQUE,
    description     TEXT,
    phase           TEXT,
    statut          TEXT NOT NULL DEFAULT 'actif'
                    CHECK (statut IN ('actif', 'en_pause', 'termine', 'abandonne')),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

-- Every phase a project has been in, so "phases" is a history and not only a field.
CREATE TABLE phases_projet (
    id          INTEGER PRIMARY KEY,
    projet_id   INTEGER NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    phase       TEXT NOT NULL,
    since       TEXT NOT NULL
);
CREATE INDEX phases_by_projet ON phases_projet(projet_id, id);

CREATE TABLE decisions (
    id          INTEGER PRIMARY KEY,
    projet_id   INTEGER NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    created_at  TEXT NOT NULL
);
CREATE INDEX decisions_by_projet ON decisions(projet_id, id);

CREATE TABLE notes (
    id          INTEGER PRIMARY KEY,
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    projet_id   INTEGER REFERENCES projets(id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX notes_by_projet ON notes(projet_id, id);

CREATE TABLE rappels (
    id          INTEGER PRIMARY KEY,
    texte       TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    echeance    TEXT NOT NULL,
    fait        INTEGER NOT NULL DEFAULT 0 CHECK (fait IN (0, 1)),
    fait_le     TEXT,
    created_at  TEXT NOT NULL,
    CHECK ((fait = 0 AND fait_le IS NULL) OR (fait = 1 AND fait_le IS NOT NULL))
);
CREATE INDEX rappels_by_echeance ON rappels(fait, echeance);

CREATE TABLE preferences (
    id              INTEGER PRIMARY KEY,
    texte           TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    texte_normalise TEXT NOT NULL,
    active          INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at      TEXT NOT NULL,
    desactivee_le   TEXT,
    CHECK ((active = 1 AND desactivee_le IS NULL) OR (active = 0 AND desactivee_le IS NOT NULL))
);
CREATE INDEX preferences_active ON preferences(active, id);

CREATE TABLE souvenirs (
    id              INTEGER PRIMARY KEY,
    texte           TEXT NOT NULL CHECK (length(trim(texte)) > 0),
    -- little-endian f32 vector; NULL when no embedding provider was reachable
    embedding       BLOB,
    embedding_model TEXT,
    created_at      TEXT NOT NULL,
    CHECK ((embedding IS NULL) = (embedding_model IS NULL))
);

CREATE VIRTUAL TABLE souvenirs_fts USING fts5(
    texte,
    content = 'souvenirs',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER souvenirs_ai AFTER INSERT ON souvenirs BEGIN
    INSERT INTO souvenirs_fts(rowid, texte) VALUES (new.id, new.texte);
END;
CREATE TRIGGER souvenirs_ad AFTER DELETE ON souvenirs BEGIN
    INSERT INTO souvenirs_fts(souvenirs_fts, rowid, texte) VALUES ('delete', old.id, old.texte);
END;
CREATE TRIGGER souvenirs_au AFTER UPDATE OF texte ON souvenirs BEGIN
    INSERT INTO souvenirs_fts(souvenirs_fts, rowid, texte) VALUES ('delete', old.id, old.texte);
    INSERT INTO souvenirs_fts(rowid, texte) VALUES (new.id, new.texte);
END;

CREATE TABLE sessions_travail (
    id          INTEGER PRIMARY KEY,
    projet_id   INTEGER NOT NULL REFERENCES projets(id) ON DELETE CASCADE,
    debut       TEXT NOT NULL,
    fin         TEXT,
    CHECK (fin IS NULL OR fin >= debut)
);
-- At most one running session: the chrono is single.
CREATE UNIQUE INDEX one_running_session ON sessions_travail((1)) WHERE fin IS NULL;
CREATE INDEX sessions_by_debut ON sessions_travail(debut);

CREATE TABLE pauses (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions_travail(id) ON DELETE CASCADE,
    debut       TEXT NOT NULL,
    fin         TEXT,
    CHECK (fin IS NULL OR fin >= debut)
);
-- At most one open pause per session.
CREATE UNIQUE INDEX one_open_pause ON pauses(session_id) WHERE fin IS NULL;
CREATE INDEX pauses_by_session ON pauses(session_id, id);
