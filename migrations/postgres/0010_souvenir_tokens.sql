-- Each souvenir's keyword tokens (FTS5's unicode61 folding, space-separated) and their
-- count, written by the store on insert (and, for older rows, when the store opens), so
-- that the keyword search finds the souvenirs holding a term through an index instead of
-- reading the whole table. The french stemming index it replaces was never used.
ALTER TABLE souvenirs ADD COLUMN mots TEXT;
ALTER TABLE souvenirs ADD COLUMN nb_mots BIGINT;
DROP INDEX IF EXISTS souvenirs_fts;
CREATE INDEX souvenirs_mots ON souvenirs USING GIN (to_tsvector('simple', coalesce(mots, '')));

-- The statistics the keyword ranking needs (row count, token count), kept by a trigger so
-- that no search reads the whole table to compute them.
CREATE TABLE souvenirs_stats (
    id            BIGINT PRIMARY KEY CHECK (id = 1),
    nb_souvenirs  BIGINT NOT NULL,
    nb_mots       BIGINT NOT NULL
);
INSERT INTO souvenirs_stats (id, nb_souvenirs, nb_mots)
    VALUES (1, (SELECT count(*) FROM souvenirs), (SELECT coalesce(sum(nb_mots), 0) FROM souvenirs));
CREATE FUNCTION souvenirs_stats_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs + 1, nb_mots = nb_mots + coalesce(NEW.nb_mots, 0);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs - 1, nb_mots = nb_mots - coalesce(OLD.nb_mots, 0);
    ELSE
        UPDATE souvenirs_stats SET nb_mots = nb_mots - coalesce(OLD.nb_mots, 0) + coalesce(NEW.nb_mots, 0);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER souvenirs_stats_follow AFTER INSERT OR DELETE OR UPDATE OF nb_mots ON souvenirs
    FOR EACH ROW EXECUTE FUNCTION souvenirs_stats_follow();
