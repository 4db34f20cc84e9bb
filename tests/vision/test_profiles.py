"""Profiles: a table's corrections stored, followed across processes, and voting on reads with the real models."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from farklecam.datasets.yolo import read_labels
from farklecam.errors import ModelLoadError, ProfileError
from farklecam.service.profiles.export import export_profile, label_line
from farklecam.service.profiles.labels import label_file_for, labelled_pictures, read_label_file
from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore, default_profiles_dir
from farklecam.service.profiles.teach import match_by_centre, teach_picture
from farklecam.vision.faces.classifier import CLASSES, FaceClassifier, FaceScores
from farklecam.vision.images import load_image
from farklecam.vision.profiles import adapter as adapter_module
from farklecam.vision.profiles.head import NeighbourVotes
from farklecam.vision.profiles.profile import Correction, Profile
from farklecam.vision.reader import DiceReader

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "bench"))

from symbol_faces import paint  # noqa: E402  (a script folder, not a package)


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProfileStore:
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    return ProfileStore()


def labelled_boxes(name: str, frame: np.ndarray) -> tuple[np.ndarray, list[int]]:
    h, w = frame.shape[:2]
    labels = read_labels(EXAMPLES / "labels" / f"{name}.txt")
    return np.array([b.to_xyxy(w, h) for b in labels], np.float32), [b.cls for b in labels]


# ---------------------------------------------------------------------------- the classifier's features
def test_the_shipped_classifier_gives_each_crop_its_features(reader: DiceReader) -> None:
    classifier = reader.classifier
    assert isinstance(classifier, FaceClassifier) and classifier.has_embedding
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    scores = classifier(frame, boxes)
    assert scores.embedding is not None and scores.embedding.shape == (5, 192)
    turns = classifier.embed_crops(classifier.crops(frame, boxes))
    assert turns.shape == (5, 4, 192)
    np.testing.assert_allclose(turns[:, 0], scores.embedding, rtol=1e-5, atol=1e-5)  # the crop as cut
    assert scores[np.array([True, False, True, False, False])].embedding.shape == (2, 192)


def test_a_model_without_features_still_reads_and_says_why_it_cannot_embed(fake_model_dir: Path) -> None:
    classifier = FaceClassifier(fake_model_dir / "face_classifier.onnx")
    frame = np.zeros((128, 128, 3), np.uint8)
    frame[24:40, 24:40] = (0, 0, 255)
    scores = classifier(frame, [[24, 24, 40, 40]])
    assert scores.embedding is None and int(scores.face[0]) == 1
    with pytest.raises(ModelLoadError, match="embedding_output"):
        classifier.embed_crops(classifier.crops(frame, [[24, 24, 40, 40]]))
    with pytest.raises(ProfileError, match="embedding"):
        adapter_module.ProfileAdapter(Profile.create(Path(fake_model_dir).parent / "p"), classifier)


def test_class_probabilities_round_trip_through_face_scores() -> None:
    probs = np.array([[0.1, 0.0, 0.0, 0.0, 0.6, 0.0, 0.2, 0.1], [0, 0, 0, 0, 0, 0, 0.3, 0.7]], np.float32)
    scores = FaceScores.from_class_probs(probs, has_not_die=True)
    assert scores.face.tolist() == [5, 0] and scores.cocked.tolist() == [False, True]
    assert scores.not_die.tolist() == [False, True]
    np.testing.assert_allclose(scores.class_probs(), probs)
    assert FaceScores.from_class_probs(probs, has_not_die=False).not_die_prob is None


# ---------------------------------------------------------------------------- the store
def test_profiles_live_where_the_environment_says_and_are_named_safely(
    store: ProfileStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_profiles_dir() == tmp_path / "profiles" and store.names() == []
    store.open_or_create("kitchen-table")
    store.open_or_create("bar.2")
    assert store.names() == ["bar.2", "kitchen-table"]
    for bad in ("", "../up", "a/b", ".hidden", "x" * 65, "sp ace"):
        with pytest.raises(ProfileError, match="cannot name a profile"):
            store.open_or_create(bad)
    with pytest.raises(ProfileError, match=r"no profile 'nope'.*profiles: bar.2, kitchen-table"):
        store.open("nope")
    assert store.forget("bar.2") == 0 and store.names() == ["kitchen-table"]
    monkeypatch.delenv(PROFILES_ENV)
    assert default_profiles_dir().parts[-2:] == ("farklecam", "profiles")


def test_a_correction_is_stored_with_its_crop_and_followed_by_another_reader_of_the_folder(
    store: ProfileStore, reader: DiceReader
) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    writer = reader.bind_profile(store.open_or_create("t"))
    elsewhere = store.open("t")  # as another process holds it
    added = writer.correct(frame, boxes[:2], ["3", "off_tray"], faces=[None, 4], source="tray_ok.jpg")
    assert [c.truth for c in added] == ["3", "off_tray"] and [c.face for c in added] == [3, 4]
    assert [c.vote for c in added] == [2, 3]
    assert len(elsewhere) == 0 and elsewhere.refresh() and len(elsewhere) == 2
    features, votes = elsewhere.features()
    assert features.shape == (2, 4, 192) and votes.tolist() == [2, 3]
    assert elsewhere.crop(elsewhere.corrections[0]).shape == (64, 64, 3)
    row = json.loads((elsewhere.folder / "corrections.jsonl").read_text().splitlines()[0])
    assert row["frame_size"] == [640, 480] and row["source"] == "tray_ok.jpg" and row["when"].endswith("+00:00")
    for truth, face in (("7", None), ("cocked", 2), ("4", 5)):
        with pytest.raises(ValueError):
            writer.correct(frame, boxes[:1], [truth], faces=[face])


def test_features_of_another_classifier_are_computed_again_from_the_crops(
    store: ProfileStore, reader: DiceReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    first = reader.bind_profile(store.open_or_create("t"))
    first.correct(frame, boxes, ["3", "4", "5", "5", "5"])
    kept = first.profile.features()[0].copy()
    monkeypatch.setattr(adapter_module, "classifier_identity", lambda classifier: "another")
    again = reader.bind_profile(store.open("t"))
    assert again.profile.embedding_source == "another"
    np.testing.assert_allclose(again.profile.features()[0], kept, atol=1e-4)  # PNG crops: the same features
    assert [c.embedding for c in again.profile.corrections] == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------- the votes
def test_taught_dice_vote_by_likeness_and_the_mix_stays_a_probability() -> None:
    taught = np.eye(4, dtype=np.float32)[:, None, :].repeat(4, axis=1)  # four dice, one direction each
    votes = NeighbourVotes.build(taught, np.array([4, 4, 6, -1]))
    assert len(votes) == 3  # a die off the tray with no face speaks for no class
    probs = np.full((3, len(CLASSES)), 1 / len(CLASSES), np.float32)
    query = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    cast = votes.votes(query)
    assert cast[0, 4] == pytest.approx(1.0) and cast[1, 6] == pytest.approx(1.0)  # their own twin: a whole vote
    assert cast[2].sum() < 1e-9  # a die like none taught gets (almost) no vote
    mixed = votes.mix(probs, query)
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, rtol=1e-6)
    assert mixed[0].argmax() == 4 and mixed[1].argmax() == 6
    np.testing.assert_allclose(mixed[2], probs[2], atol=1e-6)


def test_an_empty_profile_and_no_profile_read_alike(store: ProfileStore, reader: DiceReader) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    plain = reader.read(frame)
    assert reader.with_profile(None).read(frame).face.tolist() == plain.face.tolist()
    empty = reader.with_profile(store.open_or_create("empty")).read(frame)
    assert empty.face.tolist() == plain.face.tolist() and empty.status.tolist() == plain.status.tolist()
    np.testing.assert_array_equal(empty.face_confidence, plain.face_confidence)
    assert reader.profile is None  # with_profile made a copy


def test_a_correction_counts_from_the_next_read(store: ProfileStore, reader: DiceReader) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    table = reader.with_profile(store.open_or_create("t"))
    before = table.read(frame)
    assert table.profile is not None
    table.profile.correct(frame, before.xyxy[:1], ["not_die"])
    after = table.read(frame)
    assert len(after) == len(before) - 1  # the die taught as no die is dropped
    np.testing.assert_array_equal(after.xyxy, before.xyxy[1:])


def test_a_die_taught_as_leaning_raises_the_cocked_probability_the_fusion_weighs(
    store: ProfileStore, reader: DiceReader
) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    table = reader.bind_profile(store.open_or_create("t"))
    plain = reader.classifier(frame, boxes)
    table.correct(frame, boxes[:1], ["cocked"])
    adapted = table.adapt(plain)
    assert plain.cocked_prob[0] < 0.1 < 0.5 < adapted.cocked_prob[0] and adapted.cocked.tolist()[0]
    assert adapted.face.tolist()[1:] == plain.face.tolist()[1:]  # the other dice keep their faces


def test_a_correction_another_process_writes_counts_within_a_second(store: ProfileStore, reader: DiceReader) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    table = reader.with_profile(store.open_or_create("t"))
    before = table.read(frame)
    other = reader.bind_profile(store.open("t"))  # another process's handle on the same folder
    other.correct(frame, before.xyxy[:1], ["not_die"])
    deadline = time.monotonic() + 1.0
    while len(table.read(frame)) == len(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(table.read(frame)) == len(before) - 1


def test_a_profile_forgotten_under_a_running_reader_leaves_it_reading(
    store: ProfileStore, reader: DiceReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    table = reader.with_profile(store.open_or_create("t"))
    before = table.read(frame)
    assert table.profile is not None
    table.profile.correct(frame, before.xyxy[:1], ["not_die"])
    monkeypatch.setattr(adapter_module, "REFRESH_S", 0.0)
    store.forget("t")
    assert len(table.read(frame)) == len(before) - 1  # what it was taught still counts


def test_a_taught_logo_six_is_read_as_six_any_way_up(store: ProfileStore, reader: DiceReader) -> None:
    # The fives of tray_ok carry a maker's logo instead of pips: the classifier alone reads ones there.
    frame = load_image(EXAMPLES / "tray_ok.jpg").copy()
    boxes, classes = labelled_boxes("tray_ok", frame)
    logos = [i for i, c in enumerate(classes) if c == 4]
    for i in logos:
        paint(frame, list(boxes[i]), "logo")
    turned = np.ascontiguousarray(np.rot90(frame))  # the same dice another way up, elsewhere in the picture
    plain = reader.read(turned)
    painted = [i for i in range(len(plain)) if plain.face[i] not in (3, 4)]
    assert len(painted) == 3 and all(plain.face[i] != 5 for i in painted)
    table = reader.bind_profile(store.open_or_create("logo"))
    table.correct(frame, boxes[logos], ["5"] * len(logos))
    adapted = reader.with_profile(table).read(turned)
    assert [int(adapted.face[i]) for i in painted] == [5, 5, 5]
    assert sorted(adapted.face.tolist()) == [3, 4, 5, 5, 5]
    # Taught, the logo is this table's five: a number, not a symbol for a person to check (with three
    # corrections some are still read too unsurely to score; more corrections make them sure).
    assert not adapted.data["symbol"][painted].any()
    assert reader.read(turned).data["symbol"][painted].any()  # without the profile they are symbols


# ---------------------------------------------------------------------------- labels, teaching, export
def test_label_lines_say_face_status_and_box(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text(
        "4 0.5 0.5 0.1 0.1\n0 0.2 0.2 0.1 0.1 off_tray\n6 0.3 0.3 0.1 0.1\n2 0.4 0.4 0.1 0.1 cocked x y\n\n"
    )
    dice = read_label_file(path)
    assert [(d.truth, d.face) for d in dice] == [("5", 5), ("off_tray", 1), ("cocked", None), ("cocked", None)]
    assert dice[0].xyxy(200, 100) == pytest.approx((90, 45, 110, 55))
    for bad, why in (
        ("4 0.5 0.5 0.1", "expected 'class cx cy w h"),
        ("9 0.5 0.5 0.1 0.1", "class 9 is no die"),
        ("a 0.5 0.5 0.1 0.1", "class must be a whole number"),
        ("1 1.5 0.5 0.1 0.1", "cx cy must lie in 0..1"),
        ("1 0.5 0.5 0.1 0.1 sideways", "status 'sideways'"),
        ("6 0.5 0.5 0.1 0.1 ok", "class 6 is a die leaning with no face up, yet its status says ok"),
    ):
        path.write_text(f"0 0.5 0.5 0.1 0.1\n{bad}\n")
        with pytest.raises(ValueError, match=f"line 2: {why}"):
            read_label_file(path)


def test_labels_are_found_beside_their_pictures_or_in_a_labels_folder(tmp_path: Path) -> None:
    for folder in ("flat", "yolo/images", "yolo/labels", "examples/labels"):
        (tmp_path / folder).mkdir(parents=True)
    for image in ("flat/a.jpg", "yolo/images/b.png", "examples/c.jpg"):
        (tmp_path / image).write_bytes(b"")
    for label in ("flat/a.txt", "yolo/labels/b.txt", "examples/labels/c.txt"):
        (tmp_path / label).write_text("0 0.5 0.5 0.1 0.1\n")
    found = {image.name: label for image, label in labelled_pictures(tmp_path)}
    assert found == {
        "a.jpg": tmp_path / "flat/a.txt",
        "b.png": tmp_path / "yolo/labels/b.txt",
        "c.jpg": tmp_path / "examples/labels/c.txt",
    }
    assert label_file_for(tmp_path / "x.jpg") == tmp_path / "x.txt"  # missing: named where it was looked for


def test_labelled_boxes_are_matched_to_the_readers_by_centre() -> None:
    found = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]], np.float32)
    # the whole die, only its top face (a smaller box inside), and one matching nothing
    labelled = np.array([[19, -1, 31, 11], [2, 1, 8, 7], [100, 100, 110, 110]], np.float32)
    assert match_by_centre(found, labelled) == [(0, 1), (1, 0)]
    assert match_by_centre(found, np.empty((0, 4))) == []


def test_teaching_a_picture_adds_each_labelled_die_as_the_readers_box(store: ProfileStore, reader: DiceReader) -> None:
    table = reader.bind_profile(store.open_or_create("t"))
    taught = teach_picture(
        table, reader.detector, EXAMPLES / "tray_cocked.jpg", EXAMPLES / "labels" / "tray_cocked.txt"
    )
    assert (taught.added, taught.unmatched) == (3, 0)
    assert sorted(c.truth for c in table.profile.corrections) == ["1", "6", "cocked"]
    detected = reader.detector(load_image(EXAMPLES / "tray_cocked.jpg")).xyxy.tolist()
    for correction in table.profile.corrections:
        assert any(np.allclose(correction.box, box, atol=0.01) for box in detected)


def test_an_export_is_a_yolo_folder_the_training_commands_read(
    store: ProfileStore, reader: DiceReader, tmp_path: Path
) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    table = reader.bind_profile(store.open_or_create("t"))
    table.correct(frame, boxes, ["3", "cocked", "off_tray", "off_tray", "not_die"], faces=[None, None, 5, None, None])
    done = export_profile(table.profile, tmp_path / "out")
    assert (done.written, done.left_out) == (4, 1)  # the die off the tray with no face has no class
    lines = {c.truth + str(c.face): label_line(c) for c in table.profile.corrections}
    assert lines["3" + "3"].startswith("2 0.500000 0.500000 ") and lines["33"].endswith(" ok")
    assert lines["cockedNone"].startswith("6 ") and lines["off_tray5"].startswith("4 ")
    assert lines["not_dieNone"] == "" and lines["off_trayNone"] is None
    labels = sorted((tmp_path / "out" / "labels").glob("*.txt"))
    assert len(labels) == 4 and len(list((tmp_path / "out" / "images").glob("*.png"))) == 4
    boxes_read = [read_labels(path) for path in labels]  # the training side's reader takes the status token
    assert sorted(len(b) for b in boxes_read) == [0, 1, 1, 1]
    box = next(b for b in boxes_read if b and b[0].cls == 2)[0]
    assert box.w == pytest.approx(1 / 1.3, abs=0.01) or box.h == pytest.approx(1 / 1.3, abs=0.01)


def test_a_correction_line_round_trips() -> None:
    row = {
        "id": "abc",
        "truth": "off_tray",
        "face": 2,
        "box": [1, 2, 3, 4],
        "frame_size": [640, 480],
        "when": "2025-01-01T00:00:00+00:00",
        "crop": "crops/abc.png",
        "crop_context": 0.15,
        "embedding": 7,
    }
    correction = Correction.from_json(row)
    assert Correction.from_json(correction.to_json()) == correction and correction.vote == 1
    with pytest.raises(ValueError):
        Correction.from_json({**row, "truth": "maybe"})


def test_a_feature_row_cut_short_by_a_crash_is_written_over(store: ProfileStore, reader: DiceReader) -> None:
    frame = load_image(EXAMPLES / "tray_ok.jpg")
    boxes, _ = labelled_boxes("tray_ok", frame)
    table = reader.bind_profile(store.open_or_create("t"))
    table.correct(frame, boxes[:1], ["3"])
    with (table.profile.folder / "embeddings.f32").open("ab") as handle:
        handle.write(b"\0" * 100)  # a crash in the middle of the next row
    table.correct(frame, boxes[1:2], ["4"])
    again = store.open("t")
    np.testing.assert_allclose(again.features()[0], table.profile.features()[0])
    assert [c.embedding for c in again.corrections] == [0, 1]
