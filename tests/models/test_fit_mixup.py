"""Mixup in the crop networks' shared training loop: labels follow their crops, own random stream."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from farklecam.models.training.classifier_config import ClassifierConfig  # noqa: E402
from farklecam.models.training.facenet import FaceNet, _mixup_loss, class_loss, fit  # noqa: E402

pytestmark = pytest.mark.train


def _net(seed: int) -> FaceNet:
    torch.manual_seed(seed)
    return FaceNet(num_classes=2, widths=(4, 4, 4, 4, 4)).eval()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_blend_near_one_side_scores_each_crop_with_its_own_label(seed: int) -> None:
    # With a tiny alpha the Beta weight sits at 0 or 1, so the batch is (almost) itself or itself
    # shuffled: either way the loss must be the plain class loss, which holds only if the shuffled
    # labels travel with the shuffled crops.
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(6, 3, 32, 32, generator=gen)
    labels = torch.randint(0, 2, (6,), generator=gen)
    net = _net(seed)
    with torch.no_grad():
        mixed = _mixup_loss(net, x, labels, np.random.default_rng(seed), alpha=1e-3)
        plain = class_loss(net(x), labels)
    assert mixed.item() == pytest.approx(plain.item(), rel=1e-3, abs=1e-4)


def _run(mixup: float) -> tuple[list[list[int]], list[npt.NDArray[np.float32]]]:
    crops = torch.rand(24, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    labels = np.arange(24, dtype=np.int64) % 2
    seen: list[list[int]] = []

    def batch(idx: npt.NDArray[np.intp], rng: np.random.Generator, gen: torch.Generator) -> torch.Tensor:
        seen.append(idx.tolist())
        return crops[idx] + 0.01 * float(rng.random())  # draws from the loop's stream, as augmentation does

    config = ClassifierConfig(batch=8, max_steps=6, epochs=3, seed=4, mixup=mixup)
    model, _ = fit(_net(1), labels, batch, config, log=lambda _: None)
    return seen, [p.detach().numpy().copy() for p in model.parameters()]


def test_mixup_changes_what_is_learned_but_not_which_crops_are_drawn() -> None:
    plain_batches, plain_weights = _run(0.0)
    mixed_batches, mixed_weights = _run(0.4)
    assert mixed_batches == plain_batches  # mixup's draws come from a stream of their own
    assert any(not np.allclose(a, b) for a, b in zip(plain_weights, mixed_weights, strict=True))


def test_mixup_with_a_custom_loss_is_refused() -> None:
    config = ClassifierConfig(batch=4, max_steps=1, mixup=0.2)
    with pytest.raises(ValueError, match="custom loss"):
        fit(
            _net(0),
            np.zeros(4, np.int64),
            lambda i, r, g: torch.zeros(len(i), 3, 32, 32),
            config,
            loss=lambda o, i: o.sum(),
        )
