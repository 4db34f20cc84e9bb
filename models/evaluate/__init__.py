"""Offline measurement of the reader on labelled folders; never imported at run time."""
