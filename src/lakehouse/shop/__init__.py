"""The online shop: its generated data, the bronze loader and the logic of its Python models."""
