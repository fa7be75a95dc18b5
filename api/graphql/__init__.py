"""The GraphQL API at /graphql: a Strawberry schema over the same services, key check,
tiers and rate limits as REST (api/security.py). `schema.py` assembles it."""
