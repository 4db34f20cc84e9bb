"""Who says a die is cocked, under which vertical, and with how much say: :class:`CockedJudge`.

The cocked test (:mod:`farklecam.vision.pose.cocked`) needs the camera's vertical. Where it comes
from decides how far its word goes:

- a calibrated tray's corners (or a camera said to look straight down): the test
  decides, fused with the face classifier where a fusion was fitted with it;
- a vertical searched in the frame's own dice that they clearly agree on: the same,
  and a camera's :class:`~farklecam.vision.pose.view_search.VerticalMemory` learns it;
- the vertical a camera's memory has learned: the test alone decides, at the search's
  strict threshold;
- a search the dice do not agree on, or a memory that doubts itself (the camera seems
  to have moved): the test only vetoes the classifier's own cocked calls.

The reader (:class:`farklecam.vision.reader.DiceReader`) turns the :class:`CockedCall` into statuses;
this module holds only the choice of who decides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.vision.faces.classifier import FaceScores
from farklecam.vision.pose.cocked import CockedFusion, CockedTest
from farklecam.vision.pose.upright import UprightView
from farklecam.vision.pose.view_search import VerticalMemory, ViewSearchConfig, search_view

__all__ = ["CockedCall", "CockedJudge"]


@dataclass(frozen=True)
class CockedCall:
    """The cocked test's word on each die: its calls, probabilities and threshold, and whether it decides.

    ``view`` is the vertical a decisive call was made under; it also places each die's
    base for the off-tray test (:func:`farklecam.vision.tray.outline.footprint_inside`).
    """

    cocked: npt.NDArray[np.bool_]
    probability: npt.NDArray[np.float32]
    threshold: float
    decisive: bool
    view: UprightView | None = None


@dataclass(frozen=True)
class CockedJudge:
    """The cocked test with what it is weighed with: the fusion fitted with this classifier and the search's settings.

    Args:
        test: the cocked test.
        fusion: its fusion with the face classifier (:func:`farklecam.vision.reader.fusion_for`), or
            None for the test alone.
        search: how to search the vertical where none is known; None: no search (the
            classifier's own cocked call stands there).
    """

    test: CockedTest
    fusion: CockedFusion | None
    search: ViewSearchConfig | None

    def call(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        view: UprightView | None,
        scores: FaceScores,
        memory: VerticalMemory | None = None,
    ) -> CockedCall | None:
        """What the test says of each die, and with how much say; None where it cannot run.

        Under a known vertical (``view``: a calibrated tray's, or straight down), or one
        searched for in this frame where the dice agree on it, it decides (:meth:`decisive`).
        Under the vertical this camera's ``memory`` has learned it decides alone, at the
        search's threshold. Under the best vertical of a search the dice do not clearly
        agree on, or a learned one the memory doubts (the camera seems to have moved
        since), it only vetoes, at its own threshold (``decisive`` false).
        """
        test, search = self.test, self.search
        if view is not None:
            return self.decisive(test(frame, xyxy, view), scores, xyxy, test.threshold, view)
        if search is None:
            return None
        veto = None
        if memory is not None:
            memory.observe(frame)
        if memory is None or memory.search_due():
            estimate = search_view(test, frame, xyxy, search)
            if estimate is not None and estimate.trusted(search):
                if memory is not None:
                    memory.learn(estimate.view)
                return self.decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view)
            if memory is not None:
                memory.miss()
            if estimate is not None:
                prob = estimate.probabilities
                veto = CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        known = memory.view if memory is not None else None
        if known is None:
            return veto
        prob = test(frame, xyxy, known)
        if memory is not None and memory.doubted:
            # The camera seems to have moved and no search has confirmed the vertical: it only vetoes.
            return veto or CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        # A learned vertical judges frames no search would trust (a real die the test over-calls raises the
        # frame's score), so the test alone decides, at the search's strict threshold.
        return CockedCall(prob >= search.threshold, prob, search.threshold, decisive=True, view=known)

    def check_straight_down(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        judged: CockedCall,
        scores: FaceScores,
        limit_deg: float | None,
    ) -> tuple[CockedCall, bool]:
        """The call under straight down, or under the searched vertical if the dice say the camera is tilted.

        Only run where a die was called cocked under straight down: that is what a tilted
        camera does to flat dice, and what needs to be right. A camera that does look
        straight down keeps its call, leaning die and all, since the search leaves the most
        cocked-looking die out when it scores a vertical. ``limit_deg`` is how far off
        straight down the searched vertical must be to overrule (None: never). Returns the
        call and whether the setting was overruled.
        """
        search = self.search or ViewSearchConfig()
        if limit_deg is None or judged.view is None:
            return judged, False
        estimate = search_view(self.test, frame, xyxy, search)
        if estimate is None or not estimate.trusted(search) or estimate.view.angle_to(judged.view) <= limit_deg:
            return judged, False
        return self.decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view), True

    def decisive(
        self,
        prob: npt.NDArray[np.float32],
        scores: FaceScores,
        xyxy: npt.NDArray[np.float32],
        threshold: float,
        view: UprightView,
    ) -> CockedCall:
        """The test's call under a vertical trusted for this frame: fused with the classifier where a fusion fits it.

        The evidence a fusion may weigh beyond the two logits is taken under ``view``,
        the vertical the call is made under.

        The fusion decides at its own threshold, also under a searched vertical the
        frame's dice agree on: of the real validation photos' flat dice it called none
        cocked there (``python -m farklecam.models.thresholds.view_search --real validation``); else the
        test decides at ``threshold``.
        """
        if self.fusion is not None:
            fused = self.fusion.in_frame(prob, scores, xyxy, view)
            return CockedCall(fused >= self.fusion.threshold, fused, self.fusion.threshold, decisive=True, view=view)
        return CockedCall(prob >= threshold, prob, threshold, decisive=True, view=view)
