"""The live window: ``farklecam live`` shows the camera with the overlay and keeps score from the keyboard."""
