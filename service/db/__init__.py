"""Where games and tournaments are kept: an SQLite file (the embedded default) or a PostgreSQL server.

Both engines keep the same append-only tables, written by the same SQL through one small
interface (:mod:`.engine`): :mod:`.target` tells a file's path from a server's URL,
:mod:`.schema` and :mod:`.migrate` keep the tables at the code's version, :mod:`.sqlite` and
:mod:`.postgres` run the statements, and :mod:`.changes` says which game or tournament a
commit changed, so every server process sharing one PostgreSQL database hears of it.
"""
