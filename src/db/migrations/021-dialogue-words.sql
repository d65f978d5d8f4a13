-- The words of each dialogue's turns, counted once when its turns are written (src/generation/dialogue.queries.ts):
-- the time promised to raters and shown in the console counts the words of a batch's comparisons, and counting every
-- turn of a 20,000-pair batch again took 0.2 s of the first such page after each start (issue 12). NULL for a
-- dialogue written before this migration (or with no turns yet): counted, and stored, the first time a batch needs it.
ALTER TABLE dialogues ADD COLUMN words INTEGER CHECK (words IS NULL OR words >= 0);
