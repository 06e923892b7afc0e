-- Recurring reminders and alarms (issue 42). A recurring reminder is one row of `rappels`
-- whose due time moves to the next occurrence each time one is done or seen: its rule is an
-- RFC 5545 RRULE (`FREQ=WEEKLY;BYDAY=MO`), read from its first occurrence in local wall
-- time ("2026-12-07T19:00") in its zone ("Europe/Paris"), so that 19 h stays 19 h across a
-- change of time; `occurrences` counts those done or seen. All three NULL: a one-off
-- reminder. `fait` on a recurring reminder means its series was stopped.
ALTER TABLE rappels ADD COLUMN regle TEXT;
ALTER TABLE rappels ADD COLUMN regle_debut TEXT;
ALTER TABLE rappels ADD COLUMN fuseau TEXT;
ALTER TABLE rappels ADD COLUMN occurrences {int} NOT NULL DEFAULT 0;
-- An alarm rings like a timer (same states, bell and acknowledgement), told apart by its kind.
ALTER TABLE minuteurs ADD COLUMN genre TEXT NOT NULL DEFAULT 'minuteur' CHECK (genre IN ('minuteur', 'reveil'));
