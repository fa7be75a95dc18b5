-- 0026 the feed's own id of each news item (SQLite twin of sql/postgres/0026_news_guid.sql,
-- which says why).
ALTER TABLE news_items ADD COLUMN guid TEXT;
CREATE INDEX ix_news_items_guid ON news_items (feed_url, guid);
