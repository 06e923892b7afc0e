-- Reminders that `arthur serve` has announced (spoken, logged) once their time came: one row
-- per reminder, so a restart never announces the same reminder twice.
CREATE TABLE rappel_annonces (
    rappel_id   {int} PRIMARY KEY REFERENCES rappels(id) ON DELETE CASCADE,
    annonce_le  {time} NOT NULL
);
