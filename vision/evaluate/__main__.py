"""``python -m farklecam.vision.evaluate``: the evaluator's command line (:mod:`farklecam.vision.evaluate.run`)."""

from farklecam.vision.evaluate.run import main

raise SystemExit(main())
