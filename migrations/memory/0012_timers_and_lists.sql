-- Kitchen timers and named lists (the everyday basics). A timer is stored with its deadline,
-- so a running timer survives a restart; it rings once its deadline has passed, whoever is
-- running then. Timestamps are UTC RFC 3339 text, like every other table.
CREATE TABLE minuteurs (
    id                {id},
    nom               TEXT,
    duree_secondes    {int} NOT NULL CHECK (duree_secondes > 0),
    etat              TEXT NOT NULL CHECK (etat IN ('en_cours', 'en_pause', 'sonne', 'termine', 'annule')),
    echeance          {time},
    restant_secondes  {int},
    created_at        {time} NOT NULL,
    fini_le           {time},
    acquitte_le       {time},
    annule_le         {time},
    CHECK (etat <> 'en_cours' OR echeance IS NOT NULL),
    CHECK (etat <> 'en_pause' OR restant_secondes IS NOT NULL)
);
CREATE INDEX minuteurs_actifs ON minuteurs(etat, echeance);

CREATE TABLE listes (
    id          {id},
    nom         TEXT NOT NULL,
    nom_normalise TEXT NOT NULL UNIQUE,
    created_at  {time} NOT NULL
);

CREATE TABLE liste_elements (
    id          {id},
    liste_id    {int} NOT NULL REFERENCES listes(id) ON DELETE CASCADE,
    texte       TEXT NOT NULL,
    created_at  {time} NOT NULL
);
CREATE INDEX liste_elements_par_liste ON liste_elements(liste_id, id);
