"""Profiles on disk and in files: named folders, labelled photos in, YOLO training folders out.

The reader's side, what a profile holds and how it votes, is :mod:`farklecam.vision.profiles`.
"""
