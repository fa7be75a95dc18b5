-- 0002 append-only history, enforced by the database (SQLite twin).
-- SQLite has no TRUNCATE (DELETE without WHERE is covered) and no loops in DDL, so each
-- table gets its two triggers here; a later migration that adds a table adds its own.
-- tests/store/test_append_only.py fails if any table lacks them.

CREATE TRIGGER schema_migrations_no_update BEFORE UPDATE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "schema_migrations" is not allowed; record a new row instead'); END;
CREATE TRIGGER schema_migrations_no_delete BEFORE DELETE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "schema_migrations" is not allowed; record a new row instead'); END;

CREATE TRIGGER instruments_no_update BEFORE UPDATE ON instruments
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "instruments" is not allowed; record a new row instead'); END;
CREATE TRIGGER instruments_no_delete BEFORE DELETE ON instruments
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "instruments" is not allowed; record a new row instead'); END;

CREATE TRIGGER deliveries_no_update BEFORE UPDATE ON deliveries
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "deliveries" is not allowed; record a new row instead'); END;
CREATE TRIGGER deliveries_no_delete BEFORE DELETE ON deliveries
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "deliveries" is not allowed; record a new row instead'); END;

CREATE TRIGGER eod_prices_no_update BEFORE UPDATE ON eod_prices
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "eod_prices" is not allowed; record a new row instead'); END;
CREATE TRIGGER eod_prices_no_delete BEFORE DELETE ON eod_prices
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "eod_prices" is not allowed; record a new row instead'); END;

CREATE TRIGGER fundamentals_no_update BEFORE UPDATE ON fundamentals
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "fundamentals" is not allowed; record a new row instead'); END;
CREATE TRIGGER fundamentals_no_delete BEFORE DELETE ON fundamentals
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "fundamentals" is not allowed; record a new row instead'); END;

CREATE TRIGGER corporate_actions_no_update BEFORE UPDATE ON corporate_actions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "corporate_actions" is not allowed; record a new row instead'); END;
CREATE TRIGGER corporate_actions_no_delete BEFORE DELETE ON corporate_actions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "corporate_actions" is not allowed; record a new row instead'); END;

CREATE TRIGGER news_items_no_update BEFORE UPDATE ON news_items
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "news_items" is not allowed; record a new row instead'); END;
CREATE TRIGGER news_items_no_delete BEFORE DELETE ON news_items
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "news_items" is not allowed; record a new row instead'); END;

CREATE TRIGGER disclosures_no_update BEFORE UPDATE ON disclosures
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "disclosures" is not allowed; record a new row instead'); END;
CREATE TRIGGER disclosures_no_delete BEFORE DELETE ON disclosures
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "disclosures" is not allowed; record a new row instead'); END;

CREATE TRIGGER research_notes_no_update BEFORE UPDATE ON research_notes
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "research_notes" is not allowed; record a new row instead'); END;
CREATE TRIGGER research_notes_no_delete BEFORE DELETE ON research_notes
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "research_notes" is not allowed; record a new row instead'); END;

CREATE TRIGGER document_mentions_no_update BEFORE UPDATE ON document_mentions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "document_mentions" is not allowed; record a new row instead'); END;
CREATE TRIGGER document_mentions_no_delete BEFORE DELETE ON document_mentions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "document_mentions" is not allowed; record a new row instead'); END;

CREATE TRIGGER sentiment_scores_no_update BEFORE UPDATE ON sentiment_scores
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "sentiment_scores" is not allowed; record a new row instead'); END;
CREATE TRIGGER sentiment_scores_no_delete BEFORE DELETE ON sentiment_scores
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "sentiment_scores" is not allowed; record a new row instead'); END;

CREATE TRIGGER sentiment_composites_no_update BEFORE UPDATE ON sentiment_composites
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "sentiment_composites" is not allowed; record a new row instead'); END;
CREATE TRIGGER sentiment_composites_no_delete BEFORE DELETE ON sentiment_composites
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "sentiment_composites" is not allowed; record a new row instead'); END;

CREATE TRIGGER features_no_update BEFORE UPDATE ON features
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "features" is not allowed; record a new row instead'); END;
CREATE TRIGGER features_no_delete BEFORE DELETE ON features
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "features" is not allowed; record a new row instead'); END;

CREATE TRIGGER layer1_forecasts_no_update BEFORE UPDATE ON layer1_forecasts
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "layer1_forecasts" is not allowed; record a new row instead'); END;
CREATE TRIGGER layer1_forecasts_no_delete BEFORE DELETE ON layer1_forecasts
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "layer1_forecasts" is not allowed; record a new row instead'); END;

CREATE TRIGGER model_runs_no_update BEFORE UPDATE ON model_runs
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "model_runs" is not allowed; record a new row instead'); END;
CREATE TRIGGER model_runs_no_delete BEFORE DELETE ON model_runs
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "model_runs" is not allowed; record a new row instead'); END;

CREATE TRIGGER model_metrics_no_update BEFORE UPDATE ON model_metrics
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "model_metrics" is not allowed; record a new row instead'); END;
CREATE TRIGGER model_metrics_no_delete BEFORE DELETE ON model_metrics
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "model_metrics" is not allowed; record a new row instead'); END;

CREATE TRIGGER predictions_no_update BEFORE UPDATE ON predictions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "predictions" is not allowed; record a new row instead'); END;
CREATE TRIGGER predictions_no_delete BEFORE DELETE ON predictions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "predictions" is not allowed; record a new row instead'); END;

CREATE TRIGGER clients_no_update BEFORE UPDATE ON clients
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "clients" is not allowed; record a new row instead'); END;
CREATE TRIGGER clients_no_delete BEFORE DELETE ON clients
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "clients" is not allowed; record a new row instead'); END;

CREATE TRIGGER api_keys_no_update BEFORE UPDATE ON api_keys
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "api_keys" is not allowed; record a new row instead'); END;
CREATE TRIGGER api_keys_no_delete BEFORE DELETE ON api_keys
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "api_keys" is not allowed; record a new row instead'); END;

CREATE TRIGGER api_key_events_no_update BEFORE UPDATE ON api_key_events
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "api_key_events" is not allowed; record a new row instead'); END;
CREATE TRIGGER api_key_events_no_delete BEFORE DELETE ON api_key_events
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "api_key_events" is not allowed; record a new row instead'); END;

CREATE TRIGGER portfolios_no_update BEFORE UPDATE ON portfolios
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "portfolios" is not allowed; record a new row instead'); END;
CREATE TRIGGER portfolios_no_delete BEFORE DELETE ON portfolios
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "portfolios" is not allowed; record a new row instead'); END;

CREATE TRIGGER trades_no_update BEFORE UPDATE ON trades
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "trades" is not allowed; record a new row instead'); END;
CREATE TRIGGER trades_no_delete BEFORE DELETE ON trades
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "trades" is not allowed; record a new row instead'); END;

CREATE TRIGGER cash_entries_no_update BEFORE UPDATE ON cash_entries
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "cash_entries" is not allowed; record a new row instead'); END;
CREATE TRIGGER cash_entries_no_delete BEFORE DELETE ON cash_entries
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "cash_entries" is not allowed; record a new row instead'); END;

CREATE TRIGGER suggestions_no_update BEFORE UPDATE ON suggestions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "suggestions" is not allowed; record a new row instead'); END;
CREATE TRIGGER suggestions_no_delete BEFORE DELETE ON suggestions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "suggestions" is not allowed; record a new row instead'); END;

CREATE TRIGGER suggestion_events_no_update BEFORE UPDATE ON suggestion_events
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "suggestion_events" is not allowed; record a new row instead'); END;
CREATE TRIGGER suggestion_events_no_delete BEFORE DELETE ON suggestion_events
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "suggestion_events" is not allowed; record a new row instead'); END;

CREATE TRIGGER statement_imports_no_update BEFORE UPDATE ON statement_imports
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "statement_imports" is not allowed; record a new row instead'); END;
CREATE TRIGGER statement_imports_no_delete BEFORE DELETE ON statement_imports
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "statement_imports" is not allowed; record a new row instead'); END;

CREATE TRIGGER idempotency_records_no_update BEFORE UPDATE ON idempotency_records
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "idempotency_records" is not allowed; record a new row instead'); END;
CREATE TRIGGER idempotency_records_no_delete BEFORE DELETE ON idempotency_records
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "idempotency_records" is not allowed; record a new row instead'); END;

CREATE TRIGGER macro_observations_no_update BEFORE UPDATE ON macro_observations
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "macro_observations" is not allowed; record a new row instead'); END;
CREATE TRIGGER macro_observations_no_delete BEFORE DELETE ON macro_observations
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "macro_observations" is not allowed; record a new row instead'); END;

CREATE TRIGGER macro_parameters_no_update BEFORE UPDATE ON macro_parameters
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "macro_parameters" is not allowed; record a new row instead'); END;
CREATE TRIGGER macro_parameters_no_delete BEFORE DELETE ON macro_parameters
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "macro_parameters" is not allowed; record a new row instead'); END;

CREATE TRIGGER analyses_no_update BEFORE UPDATE ON analyses
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "analyses" is not allowed; record a new row instead'); END;
CREATE TRIGGER analyses_no_delete BEFORE DELETE ON analyses
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "analyses" is not allowed; record a new row instead'); END;

CREATE TRIGGER notifications_no_update BEFORE UPDATE ON notifications
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "notifications" is not allowed; record a new row instead'); END;
CREATE TRIGGER notifications_no_delete BEFORE DELETE ON notifications
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "notifications" is not allowed; record a new row instead'); END;

CREATE TRIGGER notification_attempts_no_update BEFORE UPDATE ON notification_attempts
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "notification_attempts" is not allowed; record a new row instead'); END;
CREATE TRIGGER notification_attempts_no_delete BEFORE DELETE ON notification_attempts
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "notification_attempts" is not allowed; record a new row instead'); END;

CREATE TRIGGER stage_runs_no_update BEFORE UPDATE ON stage_runs
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "stage_runs" is not allowed; record a new row instead'); END;
CREATE TRIGGER stage_runs_no_delete BEFORE DELETE ON stage_runs
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "stage_runs" is not allowed; record a new row instead'); END;

CREATE TRIGGER health_checks_no_update BEFORE UPDATE ON health_checks
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "health_checks" is not allowed; record a new row instead'); END;
CREATE TRIGGER health_checks_no_delete BEFORE DELETE ON health_checks
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "health_checks" is not allowed; record a new row instead'); END;
