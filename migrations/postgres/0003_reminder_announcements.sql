-- Reminders that `arthur serve` has announced (spoken, logged) once their time came: one row
-- per reminder, so a restart never announces the same reminder twice.
CREATE TABLE rappel_annonces (
    rappel_id   BIGINT PRIMARY KEY REFERENCES rappels(id) ON DELETE CASCADE,
    annonce_le  TEXT COLLATE "C" NOT NULL
);
