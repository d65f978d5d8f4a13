-- The live clock reads the lobby twice a tick (five ticks a second). Its only index on state was (batch_id, state),
-- which a lobby query across batches cannot seek: every player the server ever had was read, ten times a second,
-- for the life of the server. An index of the waiting players alone keeps that read the size of the lobby.
CREATE INDEX live_players_in_lobby ON live_players (lobby_at, rater_id) WHERE state = 'lobby';
