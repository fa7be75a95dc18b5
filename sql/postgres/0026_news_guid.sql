-- 0026 the feed's own id of each news item (its RSS guid, its Atom id), which the ingest
-- keys an item on where the feed gives one (ingest/text_sources.py `_store_news`): a feed
-- that links every story to one newsroom page and lists one story per fetch had each later
-- story taken for the first by its link. Scoped by `feed_url` (two feeds may number their
-- items alike). NULL on a feed that gives no id, and on the items stored before this
-- column: those are known by their link and their content.
ALTER TABLE news_items ADD COLUMN guid TEXT;
CREATE INDEX ix_news_items_guid ON news_items (feed_url, guid);
