"""The database: engines, the migration runner for `sql/`, table definitions, the
append-only history writer and the point-in-time readers.

May import: market."""
