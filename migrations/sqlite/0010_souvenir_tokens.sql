-- Each souvenir's keyword tokens (FTS5's unicode61 folding, space-separated) and their
-- count, written by the store on insert. SQLite searches its FTS5 table; the columns
-- keep both schemas alike, and PostgreSQL searches them through a GIN index.
ALTER TABLE souvenirs ADD COLUMN mots TEXT;
ALTER TABLE souvenirs ADD COLUMN nb_mots BIGINT;

-- The statistics the keyword ranking needs (row count, token count), kept by triggers so
-- that no search reads the whole table to compute them.
CREATE TABLE souvenirs_stats (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    nb_souvenirs  BIGINT NOT NULL,
    nb_mots       BIGINT NOT NULL
);
INSERT INTO souvenirs_stats (id, nb_souvenirs, nb_mots)
    VALUES (1, (SELECT count(*) FROM souvenirs), (SELECT coalesce(sum(nb_mots), 0) FROM souvenirs));
CREATE TRIGGER souvenirs_stats_insert AFTER INSERT ON souvenirs BEGIN
    UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs + 1, nb_mots = nb_mots + coalesce(NEW.nb_mots, 0);
END;
CREATE TRIGGER souvenirs_stats_delete AFTER DELETE ON souvenirs BEGIN
    UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs - 1, nb_mots = nb_mots - coalesce(OLD.nb_mots, 0);
END;
CREATE TRIGGER souvenirs_stats_update AFTER UPDATE OF nb_mots ON souvenirs BEGIN
    UPDATE souvenirs_stats SET nb_mots = nb_mots - coalesce(OLD.nb_mots, 0) + coalesce(NEW.nb_mots, 0);
END;
