"""The HTML report's Videos, Embeddings and Meshes sections and its image-with-boxes thumbnails, on a
logdir written by tensorboardX, torch and ours (`tfevents inspect` of those kinds: tests/viewer/test_cli.py)."""
import base64
import io
from html.parser import HTMLParser

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.plots import projections
from tfevents.viewer.reports.static import render_report

tensorboardX = pytest.importorskip("tensorboardX")
torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

TAB10 = [(0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C), (0xD6, 0x27, 0x28)]


class _Imgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(dict(attrs))


def parse(html):
    p = _Imgs()
    p.feed(html)
    return p


def data_of(uri, mime):
    prefix = "data:%s;base64," % mime
    assert uri.startswith(prefix), uri[:40]
    return base64.b64decode(uri[len(prefix):])


def png_pixels(uri):
    return np.asarray(Image.open(io.BytesIO(data_of(uri, "image/png"))).convert("RGB"))


def has_color(pixels, rgb, at_least=10):
    return int((pixels == np.array(rgb, np.uint8)).all(axis=2).sum()) >= at_least


@pytest.fixture(scope="module")
def media_logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("media")
    rng = np.random.default_rng(0)
    vid = np.repeat(rng.integers(0, 256, (2, 4, 1, 8, 8)).astype(np.uint8), 3, axis=2)
    with SummaryWriter(str(root / "ours")) as w:
        for step in (1, 2):
            w.add_video("clip", vid, step, fps=5)
        w.add_image_with_boxes("boxed", np.zeros((3, 24, 32), np.uint8), np.array([[2, 2, 20, 18]]), 1)
        red = np.zeros((1, 4, 3))
        red[..., 0] = 255
        w.add_mesh("pyramid", np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]], np.float32), colors=red,
                   faces=np.array([[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]]), global_step=3)
    tw = tensorboardX.SummaryWriter(str(root / "tbx"))
    mat = np.concatenate([rng.normal(loc=c * 4, size=(10, 5)) for c in range(3)]).astype(np.float32)
    tw.add_embedding(mat, metadata=["group%d" % (i // 10) for i in range(30)], tag="words", global_step=1)
    green = np.zeros((1, 50, 3))
    green[..., 1] = 255
    tw.add_mesh("cloud", rng.normal(size=(1, 50, 3)), colors=green, global_step=1)
    tw.close()
    pw = TorchWriter(str(root / "torch"))
    pw.add_embedding(torch.randn(40, 3), metadata=[[float(i), "p%d" % i] for i in range(40)],
                     metadata_header=["value", "name"], tag="numeric")
    pw.close()
    return root


@pytest.fixture(scope="module")
def html(media_logdir):
    return render_report(str(media_logdir))


def test_report_has_a_gif_per_video(media_logdir, html):
    ld = load_logdir(str(media_logdir))
    gifs = [a for a in parse(html).imgs if a["src"].startswith("data:image/gif")]
    videos = ld.videos[("ours", "clip")]
    assert len(gifs) == len(videos) == 2
    assert [data_of(a["src"], "image/gif") for a in gifs] == [v.data for v in videos]
    assert '<a href="#videos">Videos</a>' in html and "script" not in parse(html).tags


def test_report_embedding_scatter_is_coloured_by_the_first_metadata_column(html):
    imgs = {a["alt"]: a["src"] for a in parse(html).imgs}
    words = png_pixels(imgs["embedding PCA words:00001 (tbx)"])
    for color in TAB10[:3]:  # three groups, three colours of the categorical palette ...
        assert has_color(words, color), color
    assert not has_color(words, TAB10[3], at_least=1)  # ... and no fourth
    numeric = png_pixels(imgs["embedding PCA numeric:00000 (torch)"])  # 40 numbers: a colour bar, viridis
    assert has_color(numeric, (0x44, 0x01, 0x54), at_least=1) or has_color(numeric, (0x44, 0x02, 0x55), at_least=1)
    assert '<a href="#embeddings">Embeddings</a>' in html


def test_report_meshes_are_rendered(html):
    imgs = {a["alt"]: a["src"] for a in parse(html).imgs}
    pyramid = png_pixels(imgs["mesh pyramid (ours)"])
    r, g, b = (pyramid[..., i].astype(int) for i in range(3))
    red = (r > 60) & (g < 20) & (b < 20)
    assert red.sum() >= 2000  # the red faces fill part of the view ...
    assert len(np.unique(r[red])) >= 2  # ... shaded: faces at different angles to the light differ
    cloud = png_pixels(imgs["mesh cloud (tbx)"])
    assert has_color(cloud, (0, 255, 0), at_least=50)  # the green points
    assert '<a href="#meshes">Meshes</a>' in html


def test_report_shows_image_with_boxes_as_drawn(media_logdir, html):
    (rec,) = load_logdir(str(media_logdir)).images[("ours", "boxed")]
    img = next(a for a in parse(html).imgs if a.get("alt") == "boxed step 1")
    shown = np.asarray(Image.open(io.BytesIO(data_of(img["src"], "image/png"))))
    np.testing.assert_array_equal(shown, rec.decode())
    assert shown[2, 10, 0] > 200 and shown[10, 10].max() == 0  # the red outline, the black inside


def test_pca_matches_torch_pca_lowrank():
    rng = np.random.default_rng(4)
    mat = rng.normal(size=(60, 6)) * np.array([5, 3, 1, 0.5, 0.2, 0.1])
    coords, ratio = projections.pca_2d(mat)
    u, s, v = torch.pca_lowrank(torch.from_numpy(mat), q=6, center=True)
    want = (torch.from_numpy(mat) - torch.from_numpy(mat).mean(0)) @ v[:, :2]
    np.testing.assert_allclose(np.abs(coords), np.abs(want.numpy()), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ratio, (s[:2] ** 2 / (s ** 2).sum()).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="not empty"):
        projections.pca_2d(np.zeros((0, 3)))


def test_report_notes_an_embedding_it_cannot_draw(tmp_path):
    (tmp_path / "projector_config.pbtxt").write_text('embeddings { tensor_name: "w" }\nmodel_checkpoint_path: "m"')
    text = render_report(str(tmp_path))
    assert "not drawn: embedding &#x27;w&#x27;" in text and "checkpoint" in text
