"""Demo only: a small stand-in for a WMS's business tables (bins and their stock) and its rule."""

# Real sites point rules at their own tables; nothing in the product apps imports this app.
