"""One GraphQL type per module; each is built from the dict the shared service returns."""
