"""``python -m vision.evaluate``: the evaluator's command line (:mod:`vision.evaluate.run`)."""

from vision.evaluate.run import main

raise SystemExit(main())
