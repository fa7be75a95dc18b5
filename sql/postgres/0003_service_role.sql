-- 0003 the service role (Postgres only; SQLite has no roles).
-- The API, the CLI stages and the notebooks run SET ROLE marketintel_app on every
-- connection (setting MARKETINTEL_POSTGRES_SERVICE_ROLE), so even a leaked connection
-- cannot rewrite history: the role may read and append, nothing more. Give it a password
-- and connect as it directly in production: ALTER ROLE marketintel_app PASSWORD '...'.
-- Roles belong to the whole cluster, so a second database reuses the same role.

DO $$
BEGIN
    CREATE ROLE marketintel_app LOGIN;
EXCEPTION
    WHEN duplicate_object THEN NULL;
    WHEN unique_violation THEN NULL;  -- two databases migrating at the same moment
END
$$;

DO $$
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO marketintel_app', current_schema());
    EXECUTE format('GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA %I TO marketintel_app', current_schema());
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO marketintel_app', current_schema());
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA %I FROM marketintel_app', current_schema());
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT ON TABLES TO marketintel_app', current_schema());
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO marketintel_app', current_schema());
END
$$;
