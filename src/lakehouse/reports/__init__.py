"""Generated report sections (README, docs/) rendered from recorded results."""
