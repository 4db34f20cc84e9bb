"""Where frames come from: webcams, videos and photo folders, and whether the camera moved."""
