"""The front tool loop (``preActorDirector``, seed 002 lines 461–502): a controller model runs
each reply through functions (``actor``, ``generate_image``, ``schedule_dio``, ``over``)
instead of one direct Actor call. Its pure rules live in ``engine/``; the turn plug-in that
brings it into a turn comes next (``docs/front-loop.md``)."""
