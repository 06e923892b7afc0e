-- Kitchen timers and named lists (the everyday basics). A timer is stored with its deadline,
-- so a running timer survives a restart; it rings once its deadline has passed, whoever is
-- running then. Timestamps are UTC RFC 3339 text, like every other table.
CREATE TABLE minuteurs (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    nom               TEXT,
    duree_secondes    BIGINT NOT NULL CHECK (duree_secondes > 0),
    etat              TEXT NOT NULL CHECK (etat IN ('en_cours', 'en_pause', 'sonne', 'termine', 'annule')),
    echeance          TEXT COLLATE "C",
    restant_secondes  BIGINT,
    created_at        TEXT COLLATE "C" NOT NULL,
    fini_le           TEXT COLLATE "C",
    acquitte_le       TEXT COLLATE "C",
    annule_le         TEXT COLLATE "C",
    CHECK (etat <> 'en_cours' OR echeance IS NOT NULL),
    CHECK (etat <> 'en_pause' OR restant_secondes IS NOT NULL)
);
CREATE INDEX minuteurs_actifs ON minuteurs(etat, echeance);

CREATE TABLE listes (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    nom         TEXT NOT NULL,
    nom_normalise TEXT NOT NULL UNIQUE,
    created_at  TEXT COLLATE "C" NOT NULL
);

CREATE TABLE liste_elements (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    liste_id    BIGINT NOT NULL REFERENCES listes(id) ON DELETE CASCADE,
    texte       TEXT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX liste_elements_par_liste ON liste_elements(liste_id, id);
