"""The use cases both front ends share: the CLI verbs and the web routes call these, never each other.

Each module is one job: :mod:`.scoring` (keeps and advice for a roll),
:mod:`.rules` (what each rule option does), :mod:`.report` (a reading with its
score and advice: the one report), :mod:`.inputs` (tray corners and form rules
a client sends), :mod:`.games` (a game's public state and its actions). A route
or a verb only parses its input, calls one of these and writes the answer.
"""
