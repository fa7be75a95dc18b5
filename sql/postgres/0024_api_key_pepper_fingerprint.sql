-- 0024 the fingerprint of the pepper each client key was hashed under (desk/keys.py
-- `pepper_fingerprint`: HMAC-SHA256(pepper, a fixed label), which names the pepper without
-- giving it away). A server started with another pepper answered every key 401 and said
-- nothing; `Desk.serving` now compares its pepper with the keys that still work and stops
-- start-up when none was issued under it. NULL on keys issued before this column: they
-- are not checked.
ALTER TABLE api_keys ADD COLUMN pepper_fingerprint TEXT;
