"""Stage 2: each die's top face from its crop (classifier, pip count)."""
