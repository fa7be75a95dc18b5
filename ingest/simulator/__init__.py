"""The built-in exchange simulator: a deterministic small market (prices, quotes,
fundamentals, corporate actions, news and disclosures) and the website that serves it."""
