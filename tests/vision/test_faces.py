from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from farklecam.errors import ModelLoadError
from farklecam.vision.faces.classifier import FaceClassifier, softmax
from tests.vision.fakes import make_classifier


def _frame() -> tuple[np.ndarray, np.ndarray]:
    frame = np.zeros((100, 300, 3), np.uint8)
    frame[:, 0:100] = (0, 0, 255)  # red: "1"
    frame[:, 100:200] = (0, 255, 0)  # green: "2"
    boxes = np.array([[30, 30, 70, 70], [130, 30, 170, 70], [230, 30, 270, 70]], np.float32)  # last is black
    return frame, boxes


def test_softmax_rows_sum_to_one() -> None:
    p = softmax(np.array([[1000.0, 0.0], [1.0, 1.0]], np.float32))
    assert p.sum(axis=1) == pytest.approx([1, 1]) and p[0, 0] == pytest.approx(1.0)


@pytest.mark.parametrize("batch", ["n", 1])
def test_classify(tmp_path: Path, onnx_available: None, batch: int | str) -> None:
    classifier = FaceClassifier(make_classifier(tmp_path / "c.onnx", batch=batch))
    assert classifier.crop_size == 64 and classifier.crop_context == pytest.approx(0.15)
    frame, boxes = _frame()
    scores = classifier(frame, boxes)
    assert scores.face.tolist() == [1, 2, 0]
    assert scores.cocked.tolist() == [False, False, True]
    assert (scores.confidence > 0.9).all()
    assert scores.face_probs.shape == (3, 6) and scores.cocked_prob[2] > 0.9
    assert (scores.face_probs.sum(axis=1) + scores.cocked_prob) == pytest.approx([1, 1, 1])
    assert len(classifier(frame, np.empty((0, 4), np.float32)).face) == 0


def test_not_die_class(tmp_path: Path, onnx_available: None) -> None:
    classifier = FaceClassifier(make_classifier(tmp_path / "c.onnx", not_die=True))
    frame, boxes = _frame()
    scores = classifier(frame, boxes)
    assert scores.not_die.tolist() == [False, False, True]
    assert scores.not_die_prob is not None and scores.not_die_prob[2] > 0.5
    # The face stays the best *die* class, with its own (unrenormalised) probability.
    assert scores.face.tolist() == [1, 2, 0] and scores.confidence[2] < 0.5
    kept = scores[~scores.not_die]
    assert kept.face.tolist() == [1, 2] and kept.not_die_prob is not None and len(kept.not_die_prob) == 2
    # A model without the class vetoes nothing.
    plain = FaceClassifier(make_classifier(tmp_path / "p.onnx"))(frame, boxes)
    assert plain.not_die_prob is None and not plain.not_die.any()


def test_bad_class_names(tmp_path: Path, onnx_available: None) -> None:
    import onnx

    path = make_classifier(tmp_path / "c.onnx")
    model = onnx.load(str(path))
    for prop in model.metadata_props:
        if prop.key == "names":
            prop.value = json.dumps(["one", "2", "3", "4", "5", "6", "cocked"])
    onnx.save(model, str(path))
    with pytest.raises(ModelLoadError, match="'one'"):
        FaceClassifier(path)


@pytest.mark.parametrize("views", [2, 4, 8])
def test_views_average_turned_crops(tmp_path: Path, onnx_available: None, views: int) -> None:
    path = make_classifier(tmp_path / "c.onnx")
    frame, boxes = _frame()
    # Half a crop red, half green: each quarter turn moves the colours but not the mean,
    # so the fake (which reads the mean colour) agrees in every view.
    frame[:, 0:50] = (0, 255, 0)
    one, many = FaceClassifier(path)(frame, boxes), FaceClassifier(path, views=views)(frame, boxes)
    np.testing.assert_allclose(many.face_probs, one.face_probs, atol=1e-5)
    assert len(FaceClassifier(path, views=views)(frame, np.empty((0, 4), np.float32)).face) == 0


def test_views_must_be_a_known_count(tmp_path: Path, onnx_available: None) -> None:
    with pytest.raises(ValueError, match="views"):
        FaceClassifier(make_classifier(tmp_path / "c.onnx"), views=3)


def test_eight_views_are_the_eight_symmetries_of_a_square() -> None:
    from farklecam.vision.faces.classifier import _VIEWS

    crop = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)  # no symmetry at all
    views = [_VIEWS[8](crop, k) for k in range(8)]
    np.testing.assert_array_equal(views[0], crop)
    assert len({v.tobytes() for v in views}) == 8
    assert all(v.shape == crop.shape and v.flags.c_contiguous for v in views)


def test_logit_bias_shifts_a_class(tmp_path: Path, onnx_available: None) -> None:
    path = make_classifier(tmp_path / "c.onnx")
    frame, boxes = _frame()
    plain = FaceClassifier(path)(frame, boxes)
    # A large negative offset on "cocked" turns the black crop into its best face.
    biased = FaceClassifier(path, logit_bias=[0, 0, 0, 0, 0, 0, -50.0])(frame, boxes)
    assert plain.cocked[2] and not biased.cocked[2]
    np.testing.assert_allclose(biased.face_probs[:2], plain.face_probs[:2], atol=1e-3)
    with pytest.raises(ModelLoadError, match="logit_bias"):
        FaceClassifier(path, logit_bias=[0.0, 1.0])


def test_context_offsets_average_wider_and_tighter_cuts(tmp_path: Path, onnx_available: None) -> None:
    path = make_classifier(tmp_path / "c.onnx")
    frame, boxes = _frame()
    one_box = boxes[:1]
    plain = FaceClassifier(path)
    assert plain.contexts == (plain.crop_context,) and plain.crops(frame, boxes).shape[0] == len(boxes)
    # The same cut twice averages to the same probabilities.
    twice = FaceClassifier(path, context_offsets=(0.0, 0.0))
    np.testing.assert_allclose(twice(frame, boxes).face_probs, plain(frame, boxes).face_probs, atol=1e-5)
    # A wider cut sees the frame around the die: its probabilities are averaged with the model's own cut's.
    frame[:, :100] = (0, 255, 0)
    frame[25:75, 25:75] = (0, 0, 255)  # a red die on green: the wide cut is half green
    wide_only = FaceClassifier(path, context_offsets=(0.5,))
    assert not np.allclose(wide_only(frame, one_box).face_probs, plain(frame, one_box).face_probs, atol=1e-3)
    both = FaceClassifier(path, context_offsets=(0.0, 0.5))
    assert both.crops(frame, one_box).shape[0] == 2
    expected = (plain(frame, one_box).face_probs + wide_only(frame, one_box).face_probs) / 2
    np.testing.assert_allclose(both(frame, one_box).face_probs, expected, atol=1e-5)
    assert len(both(frame, np.empty((0, 4), np.float32)).face) == 0
    with pytest.raises(ValueError, match="context_offsets"):
        FaceClassifier(path, context_offsets=())
    with pytest.raises(ValueError, match="copies"):
        plain.classify_crops(plain.crops(frame, boxes), copies=2)


REAL_CLASSIFIER = Path(__file__).resolve().parents[2] / "models" / "face_classifier.onnx"


@pytest.mark.skipif(not REAL_CLASSIFIER.exists(), reason="needs the committed classifier")
def test_sure_dice_skip_the_other_views_and_the_rest_get_them_all() -> None:
    """With ``sure``, a die read at that probability in its first view keeps that view alone; the others are
    read exactly as with every view. The real classifier, on crops of the bundled examples."""
    from farklecam.models.evaluate.run import load_labels
    from farklecam.vision.images import load_image

    examples = sorted((REAL_CLASSIFIER.parents[1] / "examples").glob("*.jpg"))
    every = FaceClassifier(REAL_CLASSIFIER, views=4)
    crops = []
    for path in examples:
        frame = load_image(path)
        labels = load_labels(path, frame.shape[1], frame.shape[0])
        crops.append(every.crops(frame, labels.xyxy))
    batch = np.concatenate(crops)
    first = FaceClassifier(REAL_CLASSIFIER, views=1).classify_crops(batch)
    all_views = every.classify_crops(batch)
    sure = 0.9
    mixed = FaceClassifier(REAL_CLASSIFIER, views=4, sure=sure).classify_crops(batch)
    confident = (first.confidence >= sure) & (first.face > 0)
    assert 0 < confident.sum() < len(batch)  # the examples hold both kinds
    np.testing.assert_allclose(mixed.face_probs[confident], first.face_probs[confident], atol=1e-6)
    np.testing.assert_allclose(mixed.face_probs[~confident], all_views.face_probs[~confident], atol=1e-6)
    np.testing.assert_allclose(mixed.cocked_prob[~confident], all_views.cocked_prob[~confident], atol=1e-6)
    # sure=1 leaves no die sure: every view for every die.
    nobody = FaceClassifier(REAL_CLASSIFIER, views=4, sure=1.0).classify_crops(batch)
    np.testing.assert_allclose(nobody.face_probs, all_views.face_probs, atol=1e-6)
    with pytest.raises(ValueError, match="sure"):
        FaceClassifier(REAL_CLASSIFIER, views=4, sure=0.0)
