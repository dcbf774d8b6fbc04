"""Independent decoders for the fake provider's media checks: Pillow, pypdf and
simplejpeg (libjpeg-turbo, with numpy, which it decodes into), pinned, installed
from PyPI on first use into the suite's cache
(``~/.cache/session-doctor/python-<pins>``, beside the agents; ``$SD_AGENTS_CACHE``
moves both) with pip's ``--target``, as the agents are installed from npm.

There is no fallback: if they cannot be installed, importing this module
raises, and the suite fails loudly rather than judge media leniently.
"""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS = (("pillow", "13.0.0"), ("pypdf", "7.1.1"), ("simplejpeg", "1.9.0"), ("numpy", "2.4.6"))


def _prefix():
    agents = Path(os.environ.get("SD_AGENTS_CACHE") or Path.home() / ".cache" / "session-doctor" / "agents")
    return agents.parent / ("python-" + "-".join("%s%s" % p for p in PINS))


def _install():
    prefix = _prefix()
    done = prefix / ".installed"
    if not done.exists():
        # A folder without its marker is an install cut short: start again.
        shutil.rmtree(prefix, ignore_errors=True)
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", "--target", str(prefix)]
        run = subprocess.run(cmd + ["%s==%s" % p for p in PINS], capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            raise RuntimeError("the fake provider's decoders (%s) could not be installed:\n%s" % (", ".join("%s==%s" % p for p in PINS), run.stderr[-2000:]))
        done.write_text("\n".join("%s==%s" % p for p in PINS) + "\n")
    if str(prefix) not in sys.path:
        sys.path.insert(0, str(prefix))


_install()

import pypdf  # noqa: E402
import simplejpeg  # noqa: E402
from PIL import Image  # noqa: E402

Image.MAX_IMAGE_PIXELS = None  # a provider's own caps apply, not Pillow's bomb guard


def jpeg_problem(data):
    """Why libjpeg-turbo, its warnings taken as errors, cannot decode the JPEG, or None.

    Pillow decodes a JPEG whose entropy-coded scan is corrupt but ends in EOI
    (libjpeg warns "Corrupt JPEG data: ..." and fills the rest): simplejpeg's
    ``strict`` raises on that warning, as a provider's decoder refuses it."""
    try:
        _, _, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        simplejpeg.decode_jpeg(data, colorspace="CMYK" if colorspace in ("CMYK", "YCCK") else "RGB", strict=True)
    except Exception as err:
        return "libjpeg-turbo: %s" % (str(err) or type(err).__name__)
    return None


def image_problem(data):
    """Why Pillow cannot decode the image to its last pixel (a JPEG: nor
    libjpeg-turbo in strict mode), or None."""
    if data.startswith(b"\xff\xd8"):
        why = jpeg_problem(data)
        if why:
            return why
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.verify()  # chunk CRCs and structure
        with Image.open(io.BytesIO(data)) as im:
            frames = getattr(im, "n_frames", 1)
            for n in range(frames):
                im.seek(n)
                im.load()  # every byte of every frame decoded; a truncated one raises
    except Exception as err:  # Pillow raises many kinds; any of them is a refusal
        return "Pillow: %s" % (str(err) or type(err).__name__)
    return None


def pdf_facts(data):
    """(problem or None, pages, encrypted), as pypdf reads the PDF in strict mode."""
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=True)
        encrypted = reader.is_encrypted
        if encrypted:
            return None, None, True
        pages = len(reader.pages)
        for page in reader.pages:
            page.get_contents()
        return None, pages, False
    except Exception as err:
        return "pypdf: %s" % (str(err) or type(err).__name__), None, False
