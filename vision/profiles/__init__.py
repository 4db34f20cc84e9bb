"""Profiles: one table's dice and camera, learned from the corrections its users give.

A :class:`~farklecam.vision.profiles.profile.Profile` keeps the corrections (crop, box, truth)
and the face classifier's features of each; a
:class:`~farklecam.vision.profiles.adapter.ProfileAdapter` binds it to the reader's classifier,
so that ``DiceReader(profile=...)`` lets the taught dice vote on every read
(:mod:`~farklecam.vision.profiles.head`). Nothing here trains a network: numpy over the
classifier's own features.
"""
