-- 0002 append-only history, enforced by the database (Postgres).
-- Any UPDATE, DELETE or TRUNCATE on a history table raises, whoever the user is; the
-- service role of 0003 additionally lacks the privileges. A later migration that adds a
-- table calls append_only('its_name') right after creating it.

CREATE FUNCTION reject_history_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'append-only history: % on table "%" is not allowed; record a new row instead',
        TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE FUNCTION append_only(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format(
        'CREATE TRIGGER append_only_rows BEFORE UPDATE OR DELETE ON %s '
        'FOR EACH ROW EXECUTE FUNCTION reject_history_change()', target);
    EXECUTE format(
        'CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON %s '
        'FOR EACH STATEMENT EXECUTE FUNCTION reject_history_change()', target);
END
$$;

DO $$
DECLARE
    name TEXT;
BEGIN
    FOR name IN
        SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename
    LOOP
        PERFORM append_only(format('%I', name)::regclass);
    END LOOP;
END
$$;
