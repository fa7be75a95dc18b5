"""`marketintel keys ...`: a client command (it stores nothing): the admin key is made here
and kept in the environment; client keys are issued over the API (POST /api/keys/generate,
the desk's `issue_key`)."""

from __future__ import annotations

import secrets

import typer

from cli.app import command_group

keys_app = command_group("API keys.")


@keys_app.command("new-admin")
def keys_new_admin() -> None:
    """Print a fresh admin key for MARKETINTEL_ADMIN_KEY (nothing is stored)."""
    typer.echo(f"svc-admin-{secrets.token_hex(16)}")
