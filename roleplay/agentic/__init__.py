"""Agent V2: scenarios and the background continuity engine (seed 002, lines 3–240).

One package (docs/agentic.md, "Where the code lives"): ``engine/`` the pure rules,
``plugin`` its turn plug-in, ``gateway``, ``relay``, ``selectors``, ``services/``, ``views``
and ``api/``. ``config`` and ``worldbook_config`` are the scenario config classes every
capability reads; they stay here until ``roleplay/scenarios/`` takes them. Kept free of
Django at import, so ``engine`` stays pure."""
