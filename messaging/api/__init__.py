"""The chat REST API (DRF), mounted under /api/v1/."""
