-- Each souvenir's keyword tokens (FTS5's unicode61 folding, space-separated) and their
@postgres -- count, written by the store on insert (and, for older rows, when the store opens), so
@postgres -- that the keyword search finds the souvenirs holding a term through an index instead of
@postgres -- reading the whole table. The french stemming index it replaces was never used.
@sqlite -- count, written by the store on insert. SQLite searches its FTS5 table; the columns
@sqlite -- keep both schemas alike, and PostgreSQL searches them through a GIN index.
ALTER TABLE souvenirs ADD COLUMN mots TEXT;
@postgres ALTER TABLE souvenirs ADD COLUMN nb_mots BIGINT;
@postgres DROP INDEX IF EXISTS souvenirs_fts;
@postgres CREATE INDEX souvenirs_mots ON souvenirs USING GIN (to_tsvector('simple', coalesce(mots, '')));
@sqlite ALTER TABLE souvenirs ADD COLUMN nb_mots BIGINT;

@postgres -- The statistics the keyword ranking needs (row count, token count), kept by a trigger so
@sqlite -- The statistics the keyword ranking needs (row count, token count), kept by triggers so
-- that no search reads the whole table to compute them.
CREATE TABLE souvenirs_stats (
    id            {int} PRIMARY KEY CHECK (id = 1),
@postgres     nb_souvenirs  BIGINT NOT NULL,
@postgres     nb_mots       BIGINT NOT NULL
@sqlite     nb_souvenirs  BIGINT NOT NULL,
@sqlite     nb_mots       BIGINT NOT NULL
);
INSERT INTO souvenirs_stats (id, nb_souvenirs, nb_mots)
    VALUES (1, (SELECT count(*) FROM souvenirs), (SELECT coalesce(sum(nb_mots), 0) FROM souvenirs));
@postgres CREATE FUNCTION souvenirs_stats_follow() RETURNS trigger LANGUAGE plpgsql AS $$
@postgres BEGIN
@postgres     IF TG_OP = 'INSERT' THEN
@postgres         UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs + 1, nb_mots = nb_mots + coalesce(NEW.nb_mots, 0);
@postgres     ELSIF TG_OP = 'DELETE' THEN
@postgres         UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs - 1, nb_mots = nb_mots - coalesce(OLD.nb_mots, 0);
@postgres     ELSE
@postgres         UPDATE souvenirs_stats SET nb_mots = nb_mots - coalesce(OLD.nb_mots, 0) + coalesce(NEW.nb_mots, 0);
@postgres     END IF;
@postgres     RETURN NULL;
@postgres END $$;
@postgres CREATE TRIGGER souvenirs_stats_follow AFTER INSERT OR DELETE OR UPDATE OF nb_mots ON souvenirs
@postgres     FOR EACH ROW EXECUTE FUNCTION souvenirs_stats_follow();
@sqlite CREATE TRIGGER souvenirs_stats_insert AFTER INSERT ON souvenirs BEGIN
@sqlite     UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs + 1, nb_mots = nb_mots + coalesce(NEW.nb_mots, 0);
@sqlite END;
@sqlite CREATE TRIGGER souvenirs_stats_delete AFTER DELETE ON souvenirs BEGIN
@sqlite     UPDATE souvenirs_stats SET nb_souvenirs = nb_souvenirs - 1, nb_mots = nb_mots - coalesce(OLD.nb_mots, 0);
@sqlite END;
@sqlite CREATE TRIGGER souvenirs_stats_update AFTER UPDATE OF nb_mots ON souvenirs BEGIN
@sqlite     UPDATE souvenirs_stats SET nb_mots = nb_mots - coalesce(OLD.nb_mots, 0) + coalesce(NEW.nb_mots, 0);
@sqlite END;
