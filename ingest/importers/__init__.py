"""Historical importers: backfill the store from files. See `import_path`."""

from ingest.importers.files import ImportReport, import_path

__all__ = ["ImportReport", "import_path"]
