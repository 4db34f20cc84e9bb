"""``python -m farklecam.models.training``: reproduce every shipped model (see :mod:`.reproduce`)."""

import sys

from farklecam.models.training.reproduce import main

sys.exit(main())
