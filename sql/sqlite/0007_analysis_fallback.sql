-- 0007 why an analysis fell back to the template (SQLite twin of sql/postgres/0007).
ALTER TABLE analyses ADD COLUMN fallback_reason TEXT;
