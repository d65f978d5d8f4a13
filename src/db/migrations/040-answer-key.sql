-- Issue 43, "one key": how the page's script saw the first question's choice made, a key ('1', '2', '0'), a pointer or
-- tap ('pointer'), or otherwise ('other': arrow keys on the radios, a restored answer). Null when the page sent none
-- or sent a value outside this set (the answer's figures are then marked implausible; the value is never trusted).
ALTER TABLE answer_signals ADD COLUMN answer_key TEXT CHECK (answer_key IS NULL OR answer_key IN ('1', '2', '0', 'pointer', 'other'));
