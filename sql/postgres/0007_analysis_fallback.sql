-- 0007 T1 step 5: an analysis written by the template because the language model failed
-- says why (timeout, HTTP error, empty answer); null when the configured writer wrote it.
ALTER TABLE analyses ADD COLUMN fallback_reason TEXT;
