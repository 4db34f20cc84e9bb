"""``python -m farklecam.models.evaluate``: the evaluator's command line (:mod:`farklecam.models.evaluate.run`)."""

from farklecam.models.evaluate.run import main

raise SystemExit(main())
