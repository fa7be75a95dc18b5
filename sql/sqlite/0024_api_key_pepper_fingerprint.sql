-- 0024 the fingerprint of the pepper each client key was hashed under (SQLite twin of
-- sql/postgres/0024_api_key_pepper_fingerprint.sql, which says why).
ALTER TABLE api_keys ADD COLUMN pepper_fingerprint TEXT;
