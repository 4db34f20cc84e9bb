"""CLI verbs: each module defines one :class:`~service.commands.base.Command`."""

from __future__ import annotations

from service.commands.base import Command
from service.commands.live_verb import LIVE
from service.commands.read_verb import READ
from service.commands.scoring_verbs import ADVISE, RULES, SCORE, SOLVE
from service.commands.serve_verb import SERVE
from service.commands.tournament_verb import TOURNAMENT

__all__ = ["COMMANDS", "Command"]

#: Every verb, in the order ``farklecam --help`` lists them.
COMMANDS: tuple[Command, ...] = (READ, LIVE, SERVE, SCORE, ADVISE, SOLVE, RULES, TOURNAMENT)
