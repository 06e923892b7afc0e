-- Voice turns: how long each stage took (end of speech, transcription, routing, tools,
-- first audio), a JSON object written by the voice loop after the turn; NULL otherwise.
@postgres ALTER TABLE turn_traces ADD COLUMN stages TEXT CHECK (stages IS NULL OR stages::jsonb IS NOT NULL);
@sqlite ALTER TABLE turn_traces ADD COLUMN stages TEXT CHECK (stages IS NULL OR json_valid(stages));
