"""Response and request models: every endpoint's body is documented in OpenAPI from these."""
