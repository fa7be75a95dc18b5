"""The two PDF reports: Quant Briefing and Compliance Report."""
