"""CLI verbs: each module defines one :class:`~farklecam.service.commands.base.Command`."""

from __future__ import annotations

from farklecam.service.commands.base import Command
from farklecam.service.commands.chart_verb import CHART
from farklecam.service.commands.live_verb import LIVE
from farklecam.service.commands.profiles_verb import PROFILES
from farklecam.service.commands.read_verb import READ
from farklecam.service.commands.scoring_verbs import ADVISE, RULES, SCORE, SOLVE
from farklecam.service.commands.serve_verb import SERVE
from farklecam.service.commands.teach_verb import TEACH
from farklecam.service.commands.tournament_verb import TOURNAMENT

__all__ = ["COMMANDS", "Command"]

#: Every verb, in the order ``farklecam --help`` lists them.
COMMANDS: tuple[Command, ...] = (READ, LIVE, SERVE, SCORE, ADVISE, SOLVE, CHART, RULES, TOURNAMENT, TEACH, PROFILES)
