-- A due reminder is delivered when the user heard it (the voice spoke it to the end) or saw
-- it (acknowledged on a web page); until then it stays "due, not yet acknowledged" and is
-- offered again. `livre_par`: 'voix' or 'web'.
ALTER TABLE rappel_annonces ADD COLUMN livre_le {time};
ALTER TABLE rappel_annonces ADD COLUMN livre_par TEXT CHECK (livre_par IN ('voix', 'web'));
