"""The synthetic scene generator: determinism, label validity, cocked/off-tray truth, the CLI layout."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from farklecam.datasets.synthetic.__main__ import main
from farklecam.datasets.synthetic.dataset import READY_FILE, scene_name, write_dataset_yaml
from farklecam.datasets.synthetic.mesh import COCKED_TILT_DEG, FACE_NORMALS, die_mesh, top_face
from farklecam.datasets.synthetic.scene import GENERATOR_VERSIONS, Scene, generate_scene
from farklecam.datasets.synthetic.textures import DIE_STYLES, EXTRA_STYLES_V2, DieStyle, die_atlas, sample_die_style
from farklecam.datasets.synthetic.world import Tray, World, flat_rotation, lean_pose, quat_from_matrix
from farklecam.datasets.training_sets import synthetic_split
from farklecam.datasets.yolo import CLASS_NAMES, COCKED_CLASS, read_labels

W, H = 192, 144
# Scenes of seed 1 known to hold a die leaning on a wall (15) and one outside the tray (16),
# in generator version 1 (the version fixes the scenes; a later one draws other dice).
COCKED_SCENE, OFF_TRAY_SCENE = (1, 15), (1, 16)
KNOWN_VERSION = 1


@pytest.fixture(scope="module")
def scenes() -> dict[tuple[int, int], Scene]:
    keys = [(3, 0), (3, 1), (3, 2), COCKED_SCENE, OFF_TRAY_SCENE]
    known = (COCKED_SCENE, OFF_TRAY_SCENE)
    return {k: generate_scene(*k, W, H, version=KNOWN_VERSION if k in known else 2) for k in keys}


def test_same_seed_and_index_give_the_same_scene(scenes: dict[tuple[int, int], Scene]) -> None:
    again = generate_scene(3, 1, W, H)
    assert again.boxes == scenes[(3, 1)].boxes
    assert again.sidecar == scenes[(3, 1)].sidecar
    assert np.array_equal(again.image, scenes[(3, 1)].image)


def test_other_index_gives_another_scene(scenes: dict[tuple[int, int], Scene]) -> None:
    assert scenes[(3, 0)].sidecar != scenes[(3, 1)].sidecar


def test_labels_are_valid_and_inside_the_image(scenes: dict[tuple[int, int], Scene]) -> None:
    for scene in scenes.values():
        assert scene.image.shape == (H, W, 3) and scene.image.dtype == np.uint8
        assert len(scene.boxes) == len(scene.sidecar["dice"])
        for box, die in zip(scene.boxes, scene.sidecar["dice"], strict=True):
            assert 0 <= box.cls < len(CLASS_NAMES)
            x1, y1, x2, y2 = box.to_xyxy(W, H)
            assert -1e-6 <= x1 < x2 <= W + 1e-3 and -1e-6 <= y1 < y2 <= H + 1e-3
            assert np.allclose([x1, y1, x2, y2], die["box"], atol=0.2)
            assert die["status"] in {"ok", "cocked", "off_tray"}
            if die["face"] is None:
                assert box.cls == COCKED_CLASS and die["tilt_deg"] > COCKED_TILT_DEG
            else:
                assert box.cls == die["face"] - 1 and die["tilt_deg"] <= COCKED_TILT_DEG
        assert len(scene.sidecar["tray"]) == 4 and all(len(c) == 2 for c in scene.sidecar["tray"])


def test_cocked_and_off_tray_scenes_say_so(scenes: dict[tuple[int, int], Scene]) -> None:
    cocked = [d for d in scenes[COCKED_SCENE].sidecar["dice"] if d["status"] == "cocked"]
    assert cocked and all(d["tilt_deg"] > COCKED_TILT_DEG and d["face"] is None for d in cocked)
    off = [d for d in scenes[OFF_TRAY_SCENE].sidecar["dice"] if d["status"] == "off_tray"]
    assert off
    oks = [d for s in scenes.values() for d in s.sidecar["dice"] if d["status"] == "ok"]
    assert oks and all(d["tilt_deg"] <= COCKED_TILT_DEG for d in oks)


def test_image_has_texture_and_dice_show_pips(scenes: dict[tuple[int, int], Scene]) -> None:
    for scene in scenes.values():
        grey = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
        assert grey.std() > 5
        for die in scene.sidecar["dice"]:
            if die["occluded"]:
                continue
            x1, y1, x2, y2 = (round(v) for v in die["box"])
            crop = grey[y1:y2, x1:x2].astype(float)
            # Pips are small blobs of strong contrast with the body.
            assert np.percentile(crop, 95) - np.percentile(crop, 5) > 25


@pytest.mark.parametrize("value", range(1, 7))
def test_top_face_reads_each_face(value: int) -> None:
    n = np.asarray(FACE_NORMALS[value])
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(n, z)
    if np.linalg.norm(axis) < 1e-9:
        rot = np.eye(3) if n[2] > 0 else np.diag([1.0, -1.0, -1.0])
    else:
        axis /= np.linalg.norm(axis)
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        rot = np.eye(3) + k + k @ k / (1 + n @ z)
    face, tilt = top_face(rot)
    assert (face, round(tilt, 6)) == (value, 0.0)
    assert value + (7 - value) == 7 and np.allclose(FACE_NORMALS[value], -np.asarray(FACE_NORMALS[7 - value]))


def test_die_mesh_is_consistent() -> None:
    verts, idx, norms, uvs = die_mesh(2.0, 0.1)
    assert len(verts) == len(norms) == len(uvs) and len(idx) % 3 == 0 and max(idx) < len(verts)
    assert np.allclose(np.abs(np.asarray(verts)).max(), 1.0)
    assert all(0 <= u <= 1 and 0 <= v <= 1 for u, v in uvs)


def test_a_die_placed_leaning_on_a_wall_stays_cocked() -> None:
    rng = np.random.default_rng(0)
    tray = Tray(16, 12, 3, 1)
    with World(tray) as world:
        world.build((0.7, 0.7, 0.7), -1, -1, friction=0.6, restitution=0.2)
        pos, rot = lean_pose(rng, 1.6, np.array([1.0, 0.0, 0.0]), tray.width / 2, tray.floor_t, 36.0)
        world.add_die(1.6, 0.1, -1, pos, quat_from_matrix(rot), restitution=0.3)
        world.settle()
        (pose,) = world.poses()
    assert top_face(pose.rotation)[1] > COCKED_TILT_DEG


def test_dataset_yaml_is_coco8_style(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the [train] extra (ultralytics reads this file)
    data = yaml.safe_load(write_dataset_yaml(tmp_path).read_text())
    assert Path(data["path"]).is_absolute() and data["train"] == "images" and data["val"] == "images"
    assert data["names"] == {i: n for i, n in enumerate(CLASS_NAMES)}


def test_cli_writes_the_layout_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    assert main(["--out", str(out), "--count", "2", "--seed", "4", "--size", "96x72", "--start", "5"]) == 0
    for i in (5, 6):
        name = scene_name(4, i)
        image = cv2.imread(str(out / "images" / f"{name}.jpg"))
        assert image is not None and image.shape == (72, 96, 3)
        sidecar = json.loads((out / "labels" / f"{name}.json").read_text())
        assert sidecar["seed"] == 4 and sidecar["index"] == i
        assert len(read_labels(out / "labels" / f"{name}.txt")) == len(sidecar["dice"])
    assert (out / READY_FILE).exists() and (out / "dataset.yaml").exists()


def test_holdout_only_writes_exactly_the_scenes_a_full_run_holds_out(tmp_path: Path) -> None:
    args = ["--count", "16", "--seed", "1", "--size", "64x48"]  # seed 1 holds out some of its first 16
    assert main(["--out", str(tmp_path / "full"), *args]) == 0
    assert main(["--out", str(tmp_path / "held"), *args, "--holdout-only"]) == 0
    _, held_in_full = synthetic_split(tmp_path / "full")
    written = sorted((tmp_path / "held" / "images").iterdir())
    assert written
    assert [p.name for p in written] == sorted(p.name for p in held_in_full)
    assert len(written) < 16
    for path in written:  # the same scenes, not only the same names
        assert path.read_bytes() == (tmp_path / "full" / "images" / path.name).read_bytes()
    assert "holdout_only" in (tmp_path / "held" / READY_FILE).read_text()


def test_cli_rejects_a_negative_count(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--out", str(tmp_path), "--count", "-1"])
    assert exc.value.code == 2


def test_cli_rejects_a_bad_size(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--count", "1", "--size", "big"])


@pytest.mark.parametrize("rate", ["-0.1", "1.5", "often"])
def test_cli_rejects_a_bad_lean_rate(tmp_path: Path, rate: str) -> None:
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--count", "1", "--lean-rate", rate])


def test_lean_rate_one_places_a_leaning_die_in_every_scene() -> None:
    for index in range(4):
        scene = generate_scene(8, index, W, H, lean_rate=1.0)
        assert scene.sidecar["spawn"]["lean"] in ("wall", "die")
        assert scene.sidecar["lean_rate"] == 1.0
    assert generate_scene(8, 0, W, H, lean_rate=0.0).sidecar["spawn"]["lean"] is None


def test_version_one_draws_only_the_first_palette_and_version_two_the_wider_one() -> None:
    rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
    names1 = {sample_die_style(rng1, version=1).name for _ in range(400)}
    names2 = {sample_die_style(rng2, version=2).name for _ in range(400)}
    assert names1 == {name for name, *_ in DIE_STYLES}
    assert {name for name, *_ in EXTRA_STYLES_V2} <= names2
    # Both versions make the same random draws, so the rest of a version-1 scene is unchanged.
    assert rng1.random() == rng2.random()


def test_the_version_is_recorded_and_an_unknown_one_refused(tmp_path: Path) -> None:
    assert generate_scene(3, 0, W, H, version=1).sidecar["generator_version"] == 1
    with pytest.raises(ValueError, match="generator version"):
        generate_scene(3, 0, W, H, version=max(GENERATOR_VERSIONS) + 1)
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--count", "1", "--generator-version", "0"])


def test_a_flat_helper_die_shows_any_face_from_version_two_and_face_one_before() -> None:
    rng = np.random.default_rng(0)
    faces = set()
    for yaw in np.linspace(0, 6, 60):
        face, tilt = top_face(flat_rotation(rng, float(yaw)))
        assert tilt < 1e-6
        faces.add(face)
    assert faces == set(range(1, 7))
    assert top_face(flat_rotation(None, 1.0)) == (1, pytest.approx(0.0, abs=1e-6))


def test_a_clear_die_shows_the_opposite_faces_pips_through_its_body() -> None:
    body, pip = (205, 40, 45), (245, 245, 245)
    looks = {kind: DieStyle("t", body, pip, kind, 0.09, 0.2, body) for kind in ("translucent", "clear")}
    cells = {kind: die_atlas(np.random.default_rng(1), look)[:128, :128].astype(float) for kind, look in looks.items()}
    # Face 1's cell: face 6's pips (mirrored) glow through at the quarter points of the clear die only.
    ghost_at = cells["clear"][int(0.5 * 128), int(0.25 * 128)].mean() - cells["translucent"][64, 32].mean()
    plain_at = cells["clear"][int(0.5 * 128), int(0.4 * 128)].mean() - cells["translucent"][64, 51].mean()
    assert ghost_at > 15 > abs(plain_at)
