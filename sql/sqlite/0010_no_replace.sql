-- 0010 no REPLACE on history (SQLite only; issue 18).
-- INSERT OR REPLACE, REPLACE INTO and an INSERT ... ON CONFLICT REPLACE delete the row they
-- collide with without firing its DELETE trigger (unless a connection turns
-- recursive_triggers on), so 0002's triggers alone let them rewrite a trade or a deposit.
-- Each table now refuses, before any insert, a row that would collide with a stored one on
-- its primary key or on any UNIQUE constraint: an ordinary append never collides, and a
-- collision is refused whatever conflict clause the statement carries. Postgres has no
-- REPLACE and ON CONFLICT DO UPDATE fires its UPDATE triggers, so it needs no twin.
-- tests/store/test_append_only.py fails if any history table lacks this trigger.

CREATE TRIGGER analyses_no_replace BEFORE INSERT ON analyses
WHEN EXISTS (SELECT 1 FROM analyses WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "analyses" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER api_key_events_no_replace BEFORE INSERT ON api_key_events
WHEN EXISTS (SELECT 1 FROM api_key_events WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "api_key_events" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER api_keys_no_replace BEFORE INSERT ON api_keys
WHEN EXISTS (SELECT 1 FROM api_keys WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM api_keys WHERE key_hash = NEW.key_hash)
    OR EXISTS (SELECT 1 FROM api_keys WHERE key_id = NEW.key_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "api_keys" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER cash_entries_no_replace BEFORE INSERT ON cash_entries
WHEN EXISTS (SELECT 1 FROM cash_entries WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM cash_entries WHERE entry_id = NEW.entry_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "cash_entries" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER clients_no_replace BEFORE INSERT ON clients
WHEN EXISTS (SELECT 1 FROM clients WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "clients" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER corporate_actions_no_replace BEFORE INSERT ON corporate_actions
WHEN EXISTS (SELECT 1 FROM corporate_actions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "corporate_actions" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER deliveries_no_replace BEFORE INSERT ON deliveries
WHEN EXISTS (SELECT 1 FROM deliveries WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "deliveries" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER disclosures_no_replace BEFORE INSERT ON disclosures
WHEN EXISTS (SELECT 1 FROM disclosures WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "disclosures" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER document_mentions_no_replace BEFORE INSERT ON document_mentions
WHEN EXISTS (SELECT 1 FROM document_mentions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "document_mentions" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER eod_prices_no_replace BEFORE INSERT ON eod_prices
WHEN EXISTS (SELECT 1 FROM eod_prices WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "eod_prices" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER features_no_replace BEFORE INSERT ON features
WHEN EXISTS (SELECT 1 FROM features WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "features" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER fundamentals_no_replace BEFORE INSERT ON fundamentals
WHEN EXISTS (SELECT 1 FROM fundamentals WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "fundamentals" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER health_checks_no_replace BEFORE INSERT ON health_checks
WHEN EXISTS (SELECT 1 FROM health_checks WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "health_checks" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER idempotency_records_no_replace BEFORE INSERT ON idempotency_records
WHEN EXISTS (SELECT 1 FROM idempotency_records WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM idempotency_records WHERE scope = NEW.scope AND idempotency_key = NEW.idempotency_key)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "idempotency_records" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER ingest_failures_no_replace BEFORE INSERT ON ingest_failures
WHEN EXISTS (SELECT 1 FROM ingest_failures WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "ingest_failures" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER instruments_no_replace BEFORE INSERT ON instruments
WHEN EXISTS (SELECT 1 FROM instruments WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "instruments" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER layer1_forecasts_no_replace BEFORE INSERT ON layer1_forecasts
WHEN EXISTS (SELECT 1 FROM layer1_forecasts WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "layer1_forecasts" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER macro_observations_no_replace BEFORE INSERT ON macro_observations
WHEN EXISTS (SELECT 1 FROM macro_observations WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "macro_observations" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER macro_parameters_no_replace BEFORE INSERT ON macro_parameters
WHEN EXISTS (SELECT 1 FROM macro_parameters WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "macro_parameters" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER model_metrics_no_replace BEFORE INSERT ON model_metrics
WHEN EXISTS (SELECT 1 FROM model_metrics WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "model_metrics" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER model_runs_no_replace BEFORE INSERT ON model_runs
WHEN EXISTS (SELECT 1 FROM model_runs WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "model_runs" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER news_items_no_replace BEFORE INSERT ON news_items
WHEN EXISTS (SELECT 1 FROM news_items WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "news_items" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER notification_attempts_no_replace BEFORE INSERT ON notification_attempts
WHEN EXISTS (SELECT 1 FROM notification_attempts WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM notification_attempts WHERE notification_id = NEW.notification_id AND channel = NEW.channel AND attempt = NEW.attempt)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "notification_attempts" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER notifications_no_replace BEFORE INSERT ON notifications
WHEN EXISTS (SELECT 1 FROM notifications WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM notifications WHERE notification_id = NEW.notification_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "notifications" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER portfolio_days_no_replace BEFORE INSERT ON portfolio_days
WHEN EXISTS (SELECT 1 FROM portfolio_days WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "portfolio_days" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER portfolios_no_replace BEFORE INSERT ON portfolios
WHEN EXISTS (SELECT 1 FROM portfolios WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "portfolios" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER predictions_no_replace BEFORE INSERT ON predictions
WHEN EXISTS (SELECT 1 FROM predictions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "predictions" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER research_notes_no_replace BEFORE INSERT ON research_notes
WHEN EXISTS (SELECT 1 FROM research_notes WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "research_notes" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER schema_migrations_no_replace BEFORE INSERT ON schema_migrations
WHEN EXISTS (SELECT 1 FROM schema_migrations WHERE version = NEW.version)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "schema_migrations" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER sentiment_composites_no_replace BEFORE INSERT ON sentiment_composites
WHEN EXISTS (SELECT 1 FROM sentiment_composites WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "sentiment_composites" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER sentiment_scores_no_replace BEFORE INSERT ON sentiment_scores
WHEN EXISTS (SELECT 1 FROM sentiment_scores WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "sentiment_scores" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER stage_runs_no_replace BEFORE INSERT ON stage_runs
WHEN EXISTS (SELECT 1 FROM stage_runs WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM stage_runs WHERE run_id = NEW.run_id AND event = NEW.event)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "stage_runs" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER statement_imports_no_replace BEFORE INSERT ON statement_imports
WHEN EXISTS (SELECT 1 FROM statement_imports WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "statement_imports" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER suggestion_events_no_replace BEFORE INSERT ON suggestion_events
WHEN EXISTS (SELECT 1 FROM suggestion_events WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM suggestion_events WHERE suggestion_id = NEW.suggestion_id AND state = NEW.state)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "suggestion_events" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER suggestions_no_replace BEFORE INSERT ON suggestions
WHEN EXISTS (SELECT 1 FROM suggestions WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM suggestions WHERE suggestion_id = NEW.suggestion_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "suggestions" (REPLACE) is not allowed; record a new row instead'); END;

CREATE TRIGGER trades_no_replace BEFORE INSERT ON trades
WHEN EXISTS (SELECT 1 FROM trades WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM trades WHERE portfolio_id = NEW.portfolio_id AND idempotency_key = NEW.idempotency_key)
    OR EXISTS (SELECT 1 FROM trades WHERE trade_id = NEW.trade_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "trades" (REPLACE) is not allowed; record a new row instead'); END;
