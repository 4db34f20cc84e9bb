"""Banks of crops cut as at run time, and the augmentations that make them."""
